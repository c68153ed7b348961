Feature: HTTP POST binding
  Spec clause 4.1: every operation is a form POST to /<Endpoint>.asmx/<Operation> with its
  parameters as form fields; an operation without a result answers 200 with no body.

  Background:
    Given the service under test

  @BIND-METHOD-PATH @BIND-REQUEST-CONTENT-TYPE @R3-LENGTH-HOST @R9-PARAMETERS @R9-INT @OP-ENDPOINT
  @R4-STATUS @R8-HTTP-EMPTY-BODY
  Scenario Outline: <operation> over HTTP POST
    When the client calls <operation> over HTTP POST
    Then the request is a POST to the endpoint path followed by "/<operation>" (BIND-METHOD-PATH)
    And the request is typed "application/x-www-form-urlencoded" (BIND-REQUEST-CONTENT-TYPE)
    And the request carries Content-Length and Host (R3-LENGTH-HOST)
    And every parameter is a form field named exactly as in the spec (R9-PARAMETERS)
    And int parameters carry integer text (R9-INT)
    And the operation is served at its own endpoint (OP-ENDPOINT)
    And the call returns HTTP status 200 (R4-STATUS)
    And the response has no body unless the operation has a result (R8-HTTP-EMPTY-BODY)

    Examples:
      | operation              |
      | AuthCode               |
      | LogoutFromSchool       |
      | GetStudentsAudtiNote   |
      | GetTeacherSubjectsByID |
      | GetTeacherGrpupsByID   |
      | GetTokenDevice         |
      | SendNotificationType   |
      | SendMarkNotes          |
