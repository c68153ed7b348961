Feature: The real ASMX runtime's answers outside the spec's happy path
  Clients send requests the spec does not describe, and stacks answer them differently: another
  Content-Type or charset, parameter names in another case, duplicated or reordered parameters,
  another method, another SOAPAction form, an envelope variant, a missing or an extra value. Each
  request below is a row of the ASMX matrix (harness/contract/asmx_matrix.json), with what the
  real ASMX runtime answers to it, stock, with customErrors On and hardened alike
  (scripts/asmx_matrix writes it from the runtime). ASMX's answer is a fixed one (415 for a SOAP
  call typed application/xml, a MustUnderstand fault) or the answer to the same call made as the
  spec says, with the same values (?ID=7 answers as ?id=7), the values joined with ',' (?id=1&id=2
  answers as ?id=1,2) or the first of them.
  Where the spec speaks, a broken rule is a failure (a SOAP answer is an envelope of the
  request's version typed as rule 7 says). A success carrying another value than ASMX's, where
  ASMX keeps the value, is a failure: a value lost or changed. Any other difference is a warning:
  the spec is silent, and a client that follows it never sends such a request.

  Background:
    Given the service under test

  @ODD-CONTENT-TYPE @ODD-ENCODING @ODD-NAMES @ODD-DUPLICATES @ODD-METHOD @ODD-SOAPACTION @ODD-ENVELOPE
  Scenario Outline: <operation> over SOAP 1.1, sent outside the happy path
    When the client sends <operation> over SOAP 1.1 with its body typed application/xml
    And the client sends <operation> over SOAP 1.1 with no Content-Type
    And the client sends <operation> over SOAP 1.1 with its Content-Type in upper case
    And the client sends <operation> over SOAP 1.1 with its body in ISO-8859-1, declared
    And the client sends <operation> over SOAP 1.1 with its body in ISO-8859-1, named by the Content-Type only
    And the client sends <operation> over SOAP 1.1 with its body in UTF-16
    And the client sends <operation> over SOAP 1.1 with non-ASCII values typed text/xml without charset
    And the client sends <operation> over SOAP 1.1 with non-ASCII values as character references
    And the client sends <operation> over SOAP 1.1 with string values in CDATA sections
    And the client sends <operation> over SOAP 1.1 with its body compressed (Content-Encoding gzip)
    And the client sends <operation> over SOAP 1.1 with the parameter elements in another case
    And the client sends <operation> over SOAP 1.1 with each parameter element twice
    And the client sends <operation> over SOAP 1.1 with the parameter elements in reverse order
    And the client sends <operation> over SOAP 1.1 with the method HEAD
    And the client sends <operation> over SOAP 1.1 with the method OPTIONS
    And the client sends <operation> over SOAP 1.1 with the method PUT
    And the client sends <operation> over SOAP 1.1 with an unquoted SOAPAction
    And the client sends <operation> over SOAP 1.1 with no SOAPAction
    And the client sends <operation> over SOAP 1.1 with a SOAPAction in another case
    And the client sends <operation> over SOAP 1.1 with a SOAPAction without the namespace
    And the client sends <operation> over SOAP 1.1 with the envelope in the default namespace
    And the client sends <operation> over SOAP 1.1 with the operation and parameters prefixed
    And the client sends <operation> over SOAP 1.1 with the parameters in no namespace
    And the client sends <operation> over SOAP 1.1 with an unknown header that must be understood
    And the client sends <operation> over SOAP 1.1 with an unknown optional header
    And the client sends <operation> over SOAP 1.1 with string parameters xsi:nil
    And the client sends <operation> over SOAP 1.1 with a comment inside string values
    Then a request typed outside the spec is answered as ASMX answers it (ODD-CONTENT-TYPE)
    And a request in another charset or encoding is read as ASMX reads it (ODD-ENCODING)
    And names in another case are matched as ASMX matches them (ODD-NAMES)
    And duplicated or reordered parameters are read as ASMX reads them (ODD-DUPLICATES)
    And another method is refused as ASMX refuses it (ODD-METHOD)
    And each SOAPAction form is answered as ASMX answers it (ODD-SOAPACTION)
    And each envelope variant is read as ASMX reads it (ODD-ENVELOPE)

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

  @ODD-CONTENT-TYPE @ODD-ENCODING @ODD-SOAPACTION @ODD-ENVELOPE
  Scenario Outline: <operation> over SOAP 1.2, sent outside the happy path
    When the client sends <operation> over SOAP 1.2 with its body typed application/xml
    And the client sends <operation> over SOAP 1.2 with application/soap+xml without charset
    And the client sends <operation> over SOAP 1.2 with its body in ISO-8859-1, declared
    And the client sends <operation> over SOAP 1.2 with an unquoted action
    And the client sends <operation> over SOAP 1.2 with a SOAPAction header
    And the client sends <operation> over SOAP 1.2 with an unknown header that must be understood
    Then a request typed outside the spec is answered as ASMX answers it (ODD-CONTENT-TYPE)
    And a request in another charset or encoding is read as ASMX reads it (ODD-ENCODING)
    And each SOAPAction form is answered as ASMX answers it (ODD-SOAPACTION)
    And each envelope variant is read as ASMX reads it (ODD-ENVELOPE)

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

  @ODD-NAMES @ODD-DUPLICATES @ODD-METHOD @ODD-VALUES
  Scenario Outline: <operation> over HTTP GET, sent outside the happy path
    When the client sends <operation> over HTTP GET with the parameter names in another case
    And the client sends <operation> over HTTP GET with the operation name in another case
    And the client sends <operation> over HTTP GET with each parameter twice
    And the client sends <operation> over HTTP GET with the method HEAD
    And the client sends <operation> over HTTP GET with the method OPTIONS
    And the client sends <operation> over HTTP GET with an unknown extra parameter
    And the client sends <operation> over HTTP GET with each parameter name without a value
    Then names in another case are matched as ASMX matches them (ODD-NAMES)
    And duplicated or reordered parameters are read as ASMX reads them (ODD-DUPLICATES)
    And another method is refused as ASMX refuses it (ODD-METHOD)
    And missing and extra values are answered as ASMX answers them (ODD-VALUES)

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

  @ODD-CONTENT-TYPE @ODD-ENCODING @ODD-NAMES @ODD-DUPLICATES @ODD-METHOD @ODD-VALUES
  Scenario Outline: <operation> over HTTP POST, sent outside the happy path
    When the client sends <operation> over HTTP POST with no Content-Type
    And the client sends <operation> over HTTP POST with the fields as multipart/form-data
    And the client sends <operation> over HTTP POST with its fields in ISO-8859-1
    And the client sends <operation> over HTTP POST with the parameter names in another case
    And the client sends <operation> over HTTP POST with each parameter twice
    And the client sends <operation> over HTTP POST with the method PUT
    And the client sends <operation> over HTTP POST with an unknown extra parameter
    And the client sends <operation> over HTTP POST with the fields in the query string
    Then a request typed outside the spec is answered as ASMX answers it (ODD-CONTENT-TYPE)
    And a request in another charset or encoding is read as ASMX reads it (ODD-ENCODING)
    And names in another case are matched as ASMX matches them (ODD-NAMES)
    And duplicated or reordered parameters are read as ASMX reads them (ODD-DUPLICATES)
    And another method is refused as ASMX refuses it (ODD-METHOD)
    And missing and extra values are answered as ASMX answers them (ODD-VALUES)

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
