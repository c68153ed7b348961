Feature: Versioning
  Spec clause 9: SOAP 1.1 and SOAP 1.2 live on the same paths and are told apart by the
  request's Content-Type; no path carries a version segment.

  Background:
    Given the service under test

  @V1-VERSION-BY-CONTENT-TYPE @V2-NO-VERSION-SEGMENT
  Scenario Outline: <operation> answers SOAP 1.1 and SOAP 1.2 on one path
    When the client calls <operation> over SOAP 1.1 with non-ASCII values
    And the client calls <operation> over SOAP 1.2 with non-ASCII values
    Then both calls went to the same path
    And each answer is of the SOAP version its request's Content-Type named (V1-VERSION-BY-CONTENT-TYPE)
    And no path carries a version segment such as /v1/ (V2-NO-VERSION-SEGMENT)

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
