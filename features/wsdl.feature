Feature: The published WSDL holds the contract
  An endpoint may publish its WSDL at <endpoint>?WSDL, as ASP.NET ASMX does with its
  Documentation protocol on; the spec asks for none, and production deployments often turn it
  off (no WSDL is a warning; --require-wsdl makes it a failure). A published WSDL must describe
  the contract: every operation with its parameters in order, their types and its result type;
  the soap, soap12, HttpGet and HttpPost bindings, each offering every operation; SOAPAction =
  the service namespace + "/" + the operation; and a service address at the endpoint.

  Background:
    Given the service under test

  @WSDL-PUBLISHED @WSDL-DOCUMENT @WSDL-OPERATIONS @WSDL-PARAMETERS @WSDL-TYPES @WSDL-RESULT
  @WSDL-BINDINGS @WSDL-SOAPACTION @WSDL-ADDRESS
  Scenario Outline: the WSDL of <endpoint>
    When the client fetches the WSDL of <endpoint>
    Then it answers a WSDL, or none at all (WSDL-PUBLISHED)
    And a published WSDL is a WSDL of the service namespace (WSDL-DOCUMENT)
    And it names every operation of the endpoint (WSDL-OPERATIONS)
    And each operation's parameters are named as in the contract, in order (WSDL-PARAMETERS)
    And each parameter has the contract's type (WSDL-TYPES)
    And each operation has the contract's result type, or none (WSDL-RESULT)
    And the soap, soap12, HttpGet and HttpPost bindings each offer every operation (WSDL-BINDINGS)
    And each SOAPAction is the service namespace and the operation joined by "/" (WSDL-SOAPACTION)
    And every port's address is the endpoint (WSDL-ADDRESS)

    Examples:
      | endpoint                     |
      | /AuthCodeSending.asmx        |
      | /CenterlogOut.asmx           |
      | /GetStudentsAudit.asmx       |
      | /GetTeacherSubjects.asmx     |
      | /GetTeacherGroups.asmx       |
      | /PushNotificationMobile.asmx |
      | /NotificationNotes.asmx      |
