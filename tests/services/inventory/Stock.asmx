<%@ WebService Language="C#" Class="Stock" %>

using System;
using System.Web.Services;
using System.Web.Services.Protocols;

// A second test service for the harness: other namespace, typed parameters and results.
[WebService(Namespace = "http://example.org/inventory/")]
[WebServiceBinding(ConformsTo = WsiProfiles.BasicProfile1_1)]
public class Stock : WebService
{
    [WebMethod]
    public int CountItems(string sku, bool includeReserved)
    {
        return (sku == null ? 0 : sku.Length) + (includeReserved ? 1 : 0);
    }

    [WebMethod]
    public decimal PriceOf(string sku, long quantity, decimal discount)
    {
        return quantity * 2.5m - discount;
    }

    [WebMethod]
    public void Restock(Guid batch, DateTime when, short crates, byte dock)
    {
    }
}
