<%@ WebService Language="C#" Class="Builtins" %>

using System;
using System.Web.Services;
using System.Xml;
using System.Xml.Serialization;

// A test service for the XSD built-in types (issue 31): every one .NET publishes, each in an
// operation that echoes it, published as that type both ways (XmlElement DataType), and one
// operation whose parameters are xs:integer, xs:long, xs:boolean and xs:dateTime. .NET reads
// the types it has no type of its own for (integer, token, gYear, anyURI...) as a string,
// taking any text: tests/test_xsd_builtins.py pins what the runtime reads.
[WebService(Namespace = "http://example.org/builtins/")]
public class Builtins : WebService
{
    [WebMethod]
    public string Register([XmlElement(DataType = "integer")] string id, long count, bool active,
                           DateTime when)
    {
        return id + "|" + count + "|" + active + "|" + when.ToString("yyyy-MM-ddTHH:mm:ss");
    }
    [WebMethod] [return: XmlElement(DataType = "integer")]
    public string EchoInteger([XmlElement(DataType = "integer")] string value) { return value; }
    [WebMethod] [return: XmlElement(DataType = "nonNegativeInteger")]
    public string EchoNonNegativeInteger([XmlElement(DataType = "nonNegativeInteger")] string value) { return value; }
    [WebMethod] [return: XmlElement(DataType = "positiveInteger")]
    public string EchoPositiveInteger([XmlElement(DataType = "positiveInteger")] string value) { return value; }
    [WebMethod] [return: XmlElement(DataType = "nonPositiveInteger")]
    public string EchoNonPositiveInteger([XmlElement(DataType = "nonPositiveInteger")] string value) { return value; }
    [WebMethod] [return: XmlElement(DataType = "negativeInteger")]
    public string EchoNegativeInteger([XmlElement(DataType = "negativeInteger")] string value) { return value; }
    [WebMethod] [return: XmlElement(DataType = "normalizedString")]
    public string EchoNormalizedString([XmlElement(DataType = "normalizedString")] string value) { return value; }
    [WebMethod] [return: XmlElement(DataType = "token")]
    public string EchoToken([XmlElement(DataType = "token")] string value) { return value; }
    [WebMethod] [return: XmlElement(DataType = "language")]
    public string EchoLanguage([XmlElement(DataType = "language")] string value) { return value; }
    [WebMethod] [return: XmlElement(DataType = "Name")]
    public string EchoName([XmlElement(DataType = "Name")] string value) { return value; }
    [WebMethod] [return: XmlElement(DataType = "NCName")]
    public string EchoNCName([XmlElement(DataType = "NCName")] string value) { return value; }
    [WebMethod] [return: XmlElement(DataType = "NMTOKEN")]
    public string EchoNMTOKEN([XmlElement(DataType = "NMTOKEN")] string value) { return value; }
    [WebMethod] [return: XmlElement(DataType = "NMTOKENS")]
    public string EchoNMTOKENS([XmlElement(DataType = "NMTOKENS")] string value) { return value; }
    [WebMethod] [return: XmlElement(DataType = "ID")]
    public string EchoID([XmlElement(DataType = "ID")] string value) { return value; }
    [WebMethod] [return: XmlElement(DataType = "IDREF")]
    public string EchoIDREF([XmlElement(DataType = "IDREF")] string value) { return value; }
    [WebMethod] [return: XmlElement(DataType = "IDREFS")]
    public string EchoIDREFS([XmlElement(DataType = "IDREFS")] string value) { return value; }
    [WebMethod] [return: XmlElement(DataType = "ENTITY")]
    public string EchoENTITY([XmlElement(DataType = "ENTITY")] string value) { return value; }
    [WebMethod] [return: XmlElement(DataType = "ENTITIES")]
    public string EchoENTITIES([XmlElement(DataType = "ENTITIES")] string value) { return value; }
    [WebMethod] [return: XmlElement(DataType = "NOTATION")]
    public string EchoNOTATION([XmlElement(DataType = "NOTATION")] string value) { return value; }
    [WebMethod] [return: XmlElement(DataType = "anyURI")]
    public string EchoAnyURI([XmlElement(DataType = "anyURI")] string value) { return value; }
    [WebMethod] [return: XmlElement(DataType = "duration")]
    public string EchoDuration([XmlElement(DataType = "duration")] string value) { return value; }
    [WebMethod] [return: XmlElement(DataType = "gYear")]
    public string EchoGYear([XmlElement(DataType = "gYear")] string value) { return value; }
    [WebMethod] [return: XmlElement(DataType = "gYearMonth")]
    public string EchoGYearMonth([XmlElement(DataType = "gYearMonth")] string value) { return value; }
    [WebMethod] [return: XmlElement(DataType = "gMonth")]
    public string EchoGMonth([XmlElement(DataType = "gMonth")] string value) { return value; }
    [WebMethod] [return: XmlElement(DataType = "gMonthDay")]
    public string EchoGMonthDay([XmlElement(DataType = "gMonthDay")] string value) { return value; }
    [WebMethod] [return: XmlElement(DataType = "gDay")]
    public string EchoGDay([XmlElement(DataType = "gDay")] string value) { return value; }
    [WebMethod] [return: XmlElement(DataType = "hexBinary")]
    public byte[] EchoHexBinary([XmlElement(DataType = "hexBinary")] byte[] value) { return value; }
    [WebMethod]
    public XmlQualifiedName EchoQName(XmlQualifiedName value) { return value; }
    [WebMethod]
    public string EchoAnyType(object value) { return value == null ? "null" : "read"; }
}
