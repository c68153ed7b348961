Feature: One endpoint serves two operations
  Spec clauses 4.8 and 4.9: SendNotificationType and SendMarkNotes share the endpoint
  /NotificationNotes.asmx. Both must be served there, on every binding.

  Background:
    Given the service under test

  @OP-ENDPOINT @R4-STATUS
  Scenario Outline: <operation> at the shared endpoint over <binding>
    When the client calls <operation> over <binding> with XML-special values
    Then the request went to the endpoint /NotificationNotes.asmx
    And the operation is served at its own endpoint (OP-ENDPOINT)
    And the call returns HTTP status 200 (R4-STATUS)

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
