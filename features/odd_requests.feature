Feature: Requests the spec does not describe
  Clients get these wrong, and SOAP stacks answer them differently: a wrong, an empty or another
  operation's SOAPAction (SOAP 1.2: the Content-Type's action), an unknown extra parameter
  element, a SOAP 1.1 request typed text/xml without charset, a GET of an endpoint without an
  operation. Where the spec speaks, a broken rule is a failure: a SOAP answer is an envelope of
  the request's version (4.1 rule 5), typed as rule 7 says. Where it is silent (errors are "not
  shown"), the real ASMX is the measure and another answer is a warning: it answers a wrong or
  empty SOAP 1.1 SOAPAction with a Client fault, routes a SOAPAction naming another operation of
  the endpoint to that operation, ignores a SOAP 1.2 action naming none, ignores an unknown
  element, answers text/xml without charset as usual, and a bare GET with its help page (an
  error page with the Documentation protocol off).

  Background:
    Given the service under test

  @ODD-SOAPACTION
  Scenario Outline: <operation> with a wrong, an empty or another operation's SOAPAction
    When the client sends <operation> over SOAP 1.1 with a wrong SOAPAction
    And the client sends <operation> over SOAP 1.1 with an empty SOAPAction
    And the client sends <operation> over SOAP 1.1 with another operation's SOAPAction
    And the client sends <operation> over SOAP 1.2 with a wrong SOAPAction
    And the client sends <operation> over SOAP 1.2 with another operation's SOAPAction
    Then each is answered as the real ASMX answers it (ODD-SOAPACTION)

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

  @ODD-EXTRA-ELEMENT @ODD-CHARSET
  Scenario Outline: <operation> with an unknown element, and typed text/xml without charset
    When the client sends <operation> over SOAP 1.1 with an unknown extra element
    And the client sends <operation> over SOAP 1.2 with an unknown extra element
    And the client sends <operation> over SOAP 1.1 with text/xml without charset
    Then an unknown parameter element is ignored, as ASMX does (ODD-EXTRA-ELEMENT)
    And text/xml without charset is answered as usual, typed with charset=utf-8 (ODD-CHARSET)

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

  @ODD-BARE-GET
  Scenario Outline: a GET of <endpoint> without an operation
    When the client GETs <endpoint> without an operation
    Then it answers ASMX's help page, or an error status (ODD-BARE-GET)

    Examples:
      | endpoint                     |
      | /AuthCodeSending.asmx        |
      | /CenterlogOut.asmx           |
      | /GetStudentsAudit.asmx       |
      | /GetTeacherSubjects.asmx     |
      | /GetTeacherGroups.asmx       |
      | /PushNotificationMobile.asmx |
      | /NotificationNotes.asmx      |
