"""WebArena's shop REST helpers (`func:shopping_get_latest_order_url()` and the latest review's
author and rating of a SKU), with WebArena's semantics, called from inside the sandbox where the
shop is reachable, as the observer after the agent's processes are ended. The token comes from
the shop admin account (the sites file's `shopping_admin` account, else WebArena's published
one), as WebArena's `shopping_get_auth_token` does."""

from __future__ import annotations

from typing import Any

from harness.kernel.core import StateActError
from tasks.webarena.browser import Run, browser_call
from tasks.webarena.sites import SitesConfig

LATEST_ORDER = {
    "searchCriteria[sortOrders][0][field]": "created_at",
    "searchCriteria[sortOrders][0][direction]": "DESC",
    "searchCriteria[pageSize]": "1",
}


class SandboxShopHelpers:
    """The `Helpers` of `evaluators.py` for a shop configured in `sites`."""

    def __init__(self, run: Run, sites: SitesConfig):
        self.run, self.sites = run, sites

    def _get(self, path: str, params: dict | None = None) -> Any:
        if "shopping" not in self.sites.sites:
            raise StateActError("the check reads the shop's REST API; configure the shopping site")
        admin = self.sites.account("shopping_admin")
        if admin is None:
            raise StateActError("the shop's REST API needs the shopping_admin account")
        request = {
            "op": "shop_api",
            "base": self.sites.sites["shopping"].rstrip("/"),
            "path": path,
            "params": params or {},
            "username": admin.username,
            "password": admin.password,
        }
        answer = browser_call(self.run, request)
        if answer["status"] != 200:  # WebArena asserts 200
            raise StateActError(f"the shop's REST API answered HTTP {answer['status']} for {path}")
        return answer["json"]

    def shopping_get_latest_order_url(self) -> str:
        items = (self._get("/rest/V1/orders", LATEST_ORDER) or {}).get("items") or []
        if not items:  # WebArena's helper fails with an IndexError here
            raise StateActError("the shop's REST API lists no order")
        order = items[0]
        base = self.sites.sites["shopping"].rstrip("/")
        return f"{base}/sales/order/view/order_id/{int(order['increment_id'])}/"

    def _reviews(self, sku: str) -> list:
        return self._get(f"/rest/V1/products/{sku}/reviews")

    def shopping_get_sku_latest_review_author(self, sku: str) -> str:
        reviews = self._reviews(sku)
        return str(reviews[-1]["nickname"]) if reviews else ""

    def shopping_get_sku_latest_review_rating(self, sku: str) -> str:
        reviews = self._reviews(sku)
        if not reviews:
            return ""
        if reviews[0]["ratings"][0]["rating_name"] != "Rating":  # WebArena asserts it
            raise StateActError("the shop's first review has no 'Rating' rating")
        return str(reviews[-1]["ratings"][0]["percent"])
