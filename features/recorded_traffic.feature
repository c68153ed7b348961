Feature: Recorded traffic replayed
  Every exchange of a recording (pytest option --recording, several allowed; default: the sample
  recordings in recordings/) is replayed against the service under test (--target; default: the
  embedded reference). The recorded request is sent as it was recorded: body bytes unchanged,
  only scheme, host, port and the Host header moved to the target. The answer must follow the
  response rules of spec 4.1 for its operation and binding, and match the recorded answer:
  same status, same Content-Type, the same XML structure and text (namespace prefixes and
  whitespace aside; a value redacted in the recording matches any value).

  Background:
    Given the service under test

  Scenario: A recorded exchange replays as recorded
    Given a recorded exchange
    When its request is replayed against the service under test
    Then the response follows the response rules of its operation and binding
    And the response matches the recorded response
