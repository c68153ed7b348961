<%@ WebService Language="C#" Class="Forms" %>

using System;
using System.Web.Services;

// A test service for the harness's lexical checks: one operation per simple type, each echoing
// what ASMX read, so a test sees which texts the runtime accepts over SOAP and GET.
public enum Shade { Red, Green, Blue }
[WebService(Namespace = "http://example.org/lexical/")]
public class Forms : WebService
{
    [WebMethod] public string EchoInt(int value) { return value.ToString(); }
    [WebMethod] public string EchoLong(long value) { return value.ToString(); }
    [WebMethod] public string EchoShort(short value) { return value.ToString(); }
    [WebMethod] public string EchoSByte(sbyte value) { return value.ToString(); }
    [WebMethod] public string EchoByte(byte value) { return value.ToString(); }
    [WebMethod] public string EchoUShort(ushort value) { return value.ToString(); }
    [WebMethod] public string EchoUInt(uint value) { return value.ToString(); }
    [WebMethod] public string EchoULong(ulong value) { return value.ToString(); }
    [WebMethod] public string EchoBool(bool value) { return value.ToString(); }
    [WebMethod] public string EchoDecimal(decimal value) { return value.ToString(); }
    [WebMethod] public string EchoDouble(double value) { return value.ToString("R"); }
    [WebMethod] public string EchoFloat(float value) { return value.ToString("R"); }
    [WebMethod] public string EchoChar(char value) { return ((int)value).ToString(); }
    [WebMethod] public string EchoShade(Shade value) { return value.ToString(); }
    [WebMethod] public string EchoBytes(byte[] value) { return value == null ? "null" : Convert.ToBase64String(value); }
    [WebMethod] public string EchoGuid(Guid value) { return value.ToString(); }
}
