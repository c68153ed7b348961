<%@ WebService Language="C#" Class="Orders" %>

using System;
using System.Web.Services;
using System.Web.Services.Protocols;

// A third test service for the harness: arrays and complex types in parameters and results.
public enum OrderStatus { Draft, Placed, Shipped }

public class Product
{
    public int Id;
    public string Name;
    public decimal Price;
    public string[] Tags;
}

public class OrderLine
{
    public string Sku;
    public int Quantity;
    public Product Item;
}

public class Order
{
    public string Customer;
    public int Number;
    public decimal Total;
    public DateTime Placed;
    public OrderLine[] Lines;
    public OrderStatus Status;
}

[WebService(Namespace = "http://example.org/orders/")]
[WebServiceBinding(ConformsTo = WsiProfiles.BasicProfile1_1)]
public class Orders : WebService
{
    static Product Make(int id, string category)
    {
        Product p = new Product();
        p.Id = id;
        p.Name = category + "-" + id;
        p.Price = id * 1.25m;
        p.Tags = new string[] { category, "new" };
        return p;
    }

    [WebMethod]
    public Product GetProduct(int id)
    {
        return Make(id, "item");
    }

    [WebMethod]
    public Product[] ListProducts(string category)
    {
        return new Product[] { Make(1, category), Make(2, category) };
    }

    [WebMethod]
    public int SaveOrder(Order order)
    {
        if (order == null) return -1;
        return order.Number + (order.Lines == null ? 0 : order.Lines.Length);
    }

    [WebMethod]
    public string[] Tags()
    {
        return new string[] { "red", "green" };
    }

    [WebMethod]
    public int Sum(int[] values)
    {
        int total = 0;
        if (values != null) foreach (int v in values) total += v;
        return total;
    }
}
