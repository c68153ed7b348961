Feature: One endpoint serves two operations
  Spec clauses 4.8 and 4.9: SendNotificationType and SendMarkNotes share the endpoint
  /NotificationNotes.asmx. Both must be served there, on every binding. The calls carry markup
  in their values; allowed values are not shown (4.10), so a target may refuse them (ASP.NET's
  request validation does, over GET and POST) as long as the same call with plain values
  succeeds: that refusal is a warning, not a failure.

  Background:
    Given the service under test

  @OP-ENDPOINT @R4-STATUS @GAP-VALUES
  Scenario Outline: <operation> at the shared endpoint over <binding>
    When the client calls <operation> over <binding> with XML-special values
    Then the request went to the endpoint /NotificationNotes.asmx
    And the operation is served at its own endpoint (OP-ENDPOINT)
    And the call returns HTTP status 200 (R4-STATUS)
    And the values are accepted, or refused only where plain values succeed (GAP-VALUES)

    Examples:
      | operation            | binding   |
      | SendNotificationType | SOAP 1.1  |
      | SendNotificationType | SOAP 1.2  |
      | SendNotificationType | HTTP GET  |
      | SendNotificationType | HTTP POST |
      | SendMarkNotes        | SOAP 1.1  |
      | SendMarkNotes        | SOAP 1.2  |
      | SendMarkNotes        | HTTP GET  |
      | SendMarkNotes        | HTTP POST |
