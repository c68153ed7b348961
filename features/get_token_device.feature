Feature: GetTokenDevice returns its result on every binding
  Spec clause 4.7: GetTokenDevice is the one operation with a result. Over SOAP the response
  element holds one GetTokenDeviceResult string; over HTTP GET and POST the body is an XML
  document whose root is "string" in the service namespace, typed text/xml; charset=utf-8.

  Background:
    Given the service under test

  @OP-RESULT @R4-STATUS
  Scenario Outline: GetTokenDevice over <binding> with <values> values
    When the client calls GetTokenDevice over <binding> with <values> values
    Then the call returns HTTP status 200 (R4-STATUS)
    And the result comes back as <shape> (OP-RESULT)

    Examples:
      | binding   | values      | shape                                                        |
      | SOAP 1.1  | plain       | one GetTokenDeviceResult string in GetTokenDeviceResponse    |
      | SOAP 1.2  | plain       | one GetTokenDeviceResult string in GetTokenDeviceResponse    |
      | HTTP GET  | plain       | a "string" document in the service namespace, text/xml       |
      | HTTP POST | plain       | a "string" document in the service namespace, text/xml       |
      | SOAP 1.1  | XML-special | one GetTokenDeviceResult string in GetTokenDeviceResponse    |
      | HTTP GET  | non-ASCII   | a "string" document in the service namespace, text/xml       |
