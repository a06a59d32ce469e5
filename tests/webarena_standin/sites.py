"""Stand-ins for two of WebArena's sites, served on 127.0.0.1 by the tests: a shop (search, a
login form like Magento's, an order history, buying a product, and the two REST calls WebArena's
`func:shopping_get_latest_order_url()` makes) and a forum (a login form like Postmill's, posting
to a forum). Their login forms are the ones WebArena's auto_login fills (labels, placeholders,
button names), so StateAct's login recipes are exercised as they are.

Only what the bundled slice's tasks touch is here; every request is counted per path and
method, so a test can tell a fresh login from a reused state.
"""

from __future__ import annotations

import html
import json
import secrets
import threading
from collections import Counter
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

SHOP_ACCOUNT = ("emma.lopez@gmail.com", "Password.123")
FORUM_ACCOUNT = ("MarvelsGrantMan136", "test1234")
ORDERS = [  # newest first, as Magento's "My Orders" lists them
    ("000000170", "5/17/23", "$365.42", "Canceled"),
    ("000000189", "5/2/23", "$754.99", "Pending"),
    ("000000188", "3/11/23", "$2,126.32", "Complete"),
]
PRODUCTS = ["Game card case for Nintendo Switch", "Coffee mug", "Switch dock"]
SKUS = {"B07DFJ5XKH": "Foundation for mattress with frame set", "B072XS3F6W": "Table lamp"}
ADMIN_ACCOUNT = ("admin", "admin1234")


def page(title: str, body: str) -> bytes:
    return (
        f"<!doctype html><html><head><title>{html.escape(title)}</title></head>"
        f"<body>{body}</body></html>"
    ).encode()


class Site:
    """One stand-in site's state: its sessions and what it was asked."""

    def __init__(self, account: tuple[str, str]):
        self.account = account
        self.sessions: set[str] = set()
        self.requests: Counter = Counter()
        self.posts: list[dict] = []
        self.orders: list[dict] = []  # placed during the test, after ORDERS
        self.tokens: set[str] = set()
        self.lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    site: Site
    routes: dict

    def log_message(self, *args) -> None:  # quiet in tests
        pass

    def signed_in(self) -> bool:
        cookie = SimpleCookie(self.headers.get("Cookie", ""))
        return "session" in cookie and cookie["session"].value in self.site.sessions

    def send(self, body: bytes, status: int = 200, headers: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def send_json(self, value, status: int = 200) -> None:
        body = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def redirect(self, where: str, cookie: str | None = None) -> None:
        headers = {"Location": where}
        if cookie:
            headers["Set-Cookie"] = f"session={cookie}; Path=/; HttpOnly"
        self.send(b"", 302, headers)

    def form(self) -> dict[str, str]:
        length = int(self.headers.get("Content-Length") or 0)
        fields = parse_qs(self.rfile.read(length).decode())
        return {key: values[0] for key, values in fields.items()}

    def sign_in(self, username: str, password: str, then: str, again: str) -> None:
        if (username, password) != self.site.account:
            self.redirect(again)
            return
        token = secrets.token_hex(16)
        with self.site.lock:
            self.site.sessions.add(token)
        self.redirect(then, token)

    def handle_any(self, method: str) -> None:
        parsed = urlparse(self.path)
        with self.site.lock:
            self.site.requests[(method, parsed.path)] += 1
        for prefix, handler in self.routes.items():
            if parsed.path == prefix or (
                prefix.endswith("*") and parsed.path.startswith(prefix[:-1])
            ):
                handler(self, method, parsed)
                return
        self.send(page("Not found", "<h1>404</h1>"), 404)

    def do_GET(self) -> None:  # noqa: N802 -- http.server's name
        self.handle_any("GET")

    def do_POST(self) -> None:  # noqa: N802 -- http.server's name
        self.handle_any("POST")


# the shop ------------------------------------------------------------------------------------
SEARCH_FORM = (
    '<form action="/catalogsearch/result/" method="get"><label for="search">Search</label>'
    '<input id="search" name="q" type="text"><button id="search-go" type="submit">Search'
    "</button></form>"
)


def shop_home(h: Handler, method: str, parsed) -> None:
    items = "".join(f"<li>{html.escape(p)}</li>" for p in PRODUCTS)
    h.send(page("One Stop Market", f"<h1>One Stop Market</h1>{SEARCH_FORM}<ul>{items}</ul>"))


def shop_search(h: Handler, method: str, parsed) -> None:
    query = parse_qs(parsed.query).get("q", [""])[0]
    found = [p for p in PRODUCTS if query.lower() in p.lower()] if query else []
    items = "".join(f"<li class='product'>{html.escape(p)}</li>" for p in found)
    title = f"Search results for: '{html.escape(query)}'"
    h.send(page(title, f"<h1>{title}</h1>{SEARCH_FORM}<ol>{items}</ol>"))


def shop_login(h: Handler, method: str, parsed) -> None:
    if method == "POST":
        fields = h.form()
        h.sign_in(
            fields.get("login[username]", ""),
            fields.get("login[password]", ""),
            "/customer/account/",
            "/customer/account/login/",
        )
        return
    h.send(
        page(
            "Customer Login",
            '<h1>Customer Login</h1><form method="post" action="/customer/account/login/">'
            '<label for="email">Email</label><input id="email" name="login[username]" type="email">'
            '<label for="pass">Password</label>'
            '<input id="pass" name="login[password]" type="password">'
            '<button type="submit">Sign In</button></form>',
        )
    )


def shop_account(h: Handler, method: str, parsed) -> None:
    if not h.signed_in():
        h.redirect("/customer/account/login/")
        return
    h.send(
        page(
            "My Account",
            "<h1>My Account</h1><p>Welcome, Emma Lopez!</p>"
            '<a href="/sales/order/history/">My Orders</a>',
        )
    )


def shop_orders(h: Handler, method: str, parsed) -> None:
    if not h.signed_in():
        h.redirect("/customer/account/login/")
        return
    rows = "".join(
        f"<tr><td>{n}</td><td>{d}</td><td class='total'>{t}</td><td>{s}</td></tr>"
        for n, d, t, s in ORDERS
    )
    h.send(
        page(
            "My Orders",
            "<h1>My Orders</h1><table id='my-orders-table'><tr><th>Order #</th><th>Date</th>"
            f"<th>Order Total</th><th>Status</th></tr>{rows}</table>",
        )
    )


def shop_product(h: Handler, method: str, parsed) -> None:
    sku = parsed.path.rsplit("/", 1)[-1]
    if sku not in SKUS:
        h.send(page("Not found", "<h1>404</h1>"), 404)
        return
    h.send(
        page(
            SKUS[sku],
            f"<h1>{html.escape(SKUS[sku])}</h1><p>SKU {sku}</p>"
            f'<form method="post" action="/checkout/buy"><input type="hidden" name="sku" '
            f'value="{sku}"><button id="buy" type="submit">Buy now</button></form>',
        )
    )


def shop_buy(h: Handler, method: str, parsed) -> None:
    if not h.signed_in():
        h.redirect("/customer/account/login/")
        return
    sku = h.form().get("sku", "")
    with h.site.lock:
        number = 190 + len(h.site.orders)
        h.site.orders.append({"increment_id": f"{number:09d}", "sku": sku})
    h.redirect(f"/sales/order/view/order_id/{number}/")


def shop_order(h: Handler, method: str, parsed) -> None:
    if not h.signed_in():
        h.redirect("/customer/account/login/")
        return
    number = parsed.path.rstrip("/").rsplit("/", 1)[-1]
    order = next((o for o in h.site.orders if int(o["increment_id"]) == int(number)), None)
    if order is None:
        h.send(page("Not found", "<h1>404</h1>"), 404)
        return
    item = f"{html.escape(SKUS.get(order['sku'], '?'))} SKU: {html.escape(order['sku'])}"
    h.send(
        page(
            f"Order # {order['increment_id']}",
            f"<h1>Order # {order['increment_id']}</h1>"
            f'<div class="order-details-items ordered">{item}</div>',
        )
    )


def shop_rest(h: Handler, method: str, parsed) -> None:
    """Magento's REST calls WebArena's helpers make: an admin token, the orders newest first."""
    if parsed.path == "/rest/default/V1/integration/admin/token" and method == "POST":
        body = json.loads(h.rfile.read(int(h.headers.get("Content-Length") or 0)) or b"{}")
        if (body.get("username"), body.get("password")) != ADMIN_ACCOUNT:
            h.send_json({"message": "The account sign-in was incorrect"}, 401)
            return
        token = secrets.token_hex(16)
        with h.site.lock:
            h.site.tokens.add(token)
        h.send_json(token)
        return
    if h.headers.get("Authorization", "").removeprefix("Bearer ") not in h.site.tokens:
        h.send_json({"message": "unauthorized"}, 401)
        return
    if parsed.path == "/rest/V1/orders":
        query = parse_qs(parsed.query)
        newest_first = query.get("searchCriteria[sortOrders][0][direction]") == ["DESC"]
        orders = list(reversed(h.site.orders)) if newest_first else list(h.site.orders)
        size = int(query.get("searchCriteria[pageSize]", ["20"])[0])
        h.send_json({"items": orders[:size], "total_count": len(orders)})
        return
    h.send_json({"message": "not found"}, 404)


SHOP_ROUTES = {
    "/": shop_home,
    "/catalogsearch/result/": shop_search,
    "/customer/account/login/": shop_login,
    "/customer/account/": shop_account,
    "/sales/order/history/": shop_orders,
    "/product/*": shop_product,
    "/checkout/buy": shop_buy,
    "/sales/order/view/*": shop_order,
    "/rest/*": shop_rest,
}


# the forum -----------------------------------------------------------------------------------
def forum_home(h: Handler, method: str, parsed) -> None:
    h.send(
        page("Postmill", '<h1>Forums</h1><a href="/f/books">books</a> <a href="/login">Log in</a>')
    )


def forum_login(h: Handler, method: str, parsed) -> None:
    if method == "POST":
        fields = h.form()
        h.sign_in(fields.get("_username", ""), fields.get("_password", ""), "/", "/login")
        return
    h.send(
        page(
            "Log in",
            '<form method="post" action="/login"><label for="u">Username</label>'
            '<input id="u" name="_username"><label for="p">Password</label>'
            '<input id="p" name="_password" type="password"><button type="submit">Log in</button>'
            "</form>",
        )
    )


def forum_pages(h: Handler, method: str, parsed) -> None:
    parts = parsed.path.strip("/").split("/")  # f/<forum>[/submit | /<id>[/<slug>]]
    if len(parts) == 2:
        posts = "".join(
            f'<li><a href="/f/{p["forum"]}/{p["id"]}/{p["slug"]}">'
            f"{html.escape(p['title'])}</a></li>"
            for p in h.site.posts
            if p["forum"] == parts[1]
        )
        h.send(
            page(
                parts[1],
                f'<h1>{parts[1]}</h1><a href="/f/{parts[1]}/submit">Submit</a><ul>{posts}</ul>',
            )
        )
        return
    if parts[2] == "submit":
        forum_submit(h, method, parts[1])
        return
    post = next((p for p in h.site.posts if str(p["id"]) == parts[2]), None)
    if post is None:
        h.send(page("Not found", "<h1>404</h1>"), 404)
        return
    h.send(
        page(
            post["title"],
            '<article class="submission"><div class="submission__inner">'
            f'<h1 class="submission__title">{html.escape(post["title"])}</h1>'
            f'<div class="submission__body">{html.escape(post["body"])}</div></div></article>',
        )
    )


def forum_submit(h: Handler, method: str, forum: str) -> None:
    if not h.signed_in():
        h.redirect("/login")
        return
    if method == "POST":
        fields = h.form()
        with h.site.lock:
            post = {
                "id": len(h.site.posts) + 1,
                "forum": forum,
                "title": fields.get("title", ""),
                "body": fields.get("body", ""),
            }
            post["slug"] = "-".join(post["title"].lower().split())[:40] or "post"
            h.site.posts.append(post)
        h.redirect(f"/f/{forum}/{post['id']}/{post['slug']}")
        return
    h.send(
        page(
            "Submit",
            f'<form method="post" action="/f/{forum}/submit"><label for="title">Title</label>'
            '<input id="title" name="title"><label for="body">Body</label>'
            '<textarea id="body" name="body"></textarea><button id="submit" type="submit">'
            "Create submission</button></form>",
        )
    )


FORUM_ROUTES = {"/": forum_home, "/login": forum_login, "/f/*": forum_pages}


class StandIn:
    """A stand-in site on 127.0.0.1 (a free port), served on a thread until `close`."""

    def __init__(self, routes: dict, account: tuple[str, str]):
        self.site = Site(account)
        handler = type("SiteHandler", (Handler,), {"site": self.site, "routes": routes})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def shop() -> StandIn:
    return StandIn(SHOP_ROUTES, SHOP_ACCOUNT)


def forum() -> StandIn:
    return StandIn(FORUM_ROUTES, FORUM_ACCOUNT)
