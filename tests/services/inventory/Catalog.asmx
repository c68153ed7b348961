<%@ WebService Language="C#" Class="Catalog" %>

using System;
using System.Web.Services;
using System.Web.Services.Protocols;

public enum Color { Red, Green, Blue }

// A second test service for the harness: other namespace, typed parameters and results.
[WebService(Namespace = "http://example.org/inventory/")]
[WebServiceBinding(ConformsTo = WsiProfiles.BasicProfile1_1)]
public class Catalog : WebService
{
    [WebMethod]
    public Guid Register(string name, double weight, float volume)
    {
        return new Guid("0f8fad5b-d9cb-469f-a165-70867728950e");
    }

    [WebMethod]
    public DateTime LastSeen(uint id, ulong serial, ushort shelf, sbyte level)
    {
        return new DateTime(2024, 1, 31, 12, 34, 56, DateTimeKind.Utc);
    }

    [WebMethod]
    public Color ColorOf(string sku, Color fallback)
    {
        return fallback;
    }

    [WebMethod]
    public bool Check(ulong serial, short delta)
    {
        return delta > 0;
    }
}
