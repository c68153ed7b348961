<%@ WebService Language="C#" Class="Dates" %>

using System;
using System.Web.Services;
using System.Xml.Serialization;

// A test service for the harness's date checks: one operation per XSD date type, each echoing
// what ASMX read (its round-trip form), so a test sees which texts the runtime accepts.
[WebService(Namespace = "http://example.org/lexical/")]
public class Dates : WebService
{
    [WebMethod]
    public string EchoDateTime(DateTime value) { return value.ToString("o"); }

    [WebMethod]
    public string EchoDate([XmlElement(DataType = "date")] DateTime value) { return value.ToString("o"); }

    [WebMethod]
    public string EchoTime([XmlElement(DataType = "time")] DateTime value) { return value.ToString("o"); }
}
