Feature: SOAP 1.1 binding
  Spec clause 4.1: every operation is a POST of a SOAP 1.1 envelope to its endpoint, and the
  answer is a SOAP 1.1 envelope holding the operation's response element.

  Background:
    Given the service under test

  @BIND-METHOD-PATH @BIND-REQUEST-CONTENT-TYPE @BIND-ENVELOPE @BIND-OPERATION-ELEMENT
  @R1-SOAPACTION @R3-LENGTH-HOST @R9-PARAMETERS @R9-INT @OP-ENDPOINT
  @R4-STATUS @R5-ENVELOPE @R5-RESPONSE-ELEMENT @R6-EMPTY-RESPONSE @R7-SOAP-CONTENT-TYPE
  Scenario Outline: <operation> over SOAP 1.1
    When the client calls <operation> over SOAP 1.1
    Then the request is a POST to the operation's endpoint (BIND-METHOD-PATH)
    And the request is typed "text/xml; charset=utf-8" (BIND-REQUEST-CONTENT-TYPE)
    And the request is a SOAP 1.1 envelope (BIND-ENVELOPE)
    And its Body holds one element named after the operation in the service namespace (BIND-OPERATION-ELEMENT)
    And the request carries SOAPAction "{service_namespace}/<operation>", quoted (R1-SOAPACTION)
    And the request carries Content-Length and Host (R3-LENGTH-HOST)
    And the parameters are child elements named as in the spec, in table order (R9-PARAMETERS)
    And int parameters carry integers (R9-INT)
    And the operation is served at its own endpoint (OP-ENDPOINT)
    And the call returns HTTP status 200 (R4-STATUS)
    And the response is a SOAP 1.1 envelope (R5-ENVELOPE)
    And its Body holds "<operation>Response" in the service namespace (R5-RESPONSE-ELEMENT)
    And the response element is empty unless the operation has a result (R6-EMPTY-RESPONSE)
    And the response is typed "text/xml; charset=utf-8" (R7-SOAP-CONTENT-TYPE)

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
