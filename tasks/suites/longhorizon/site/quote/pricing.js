// Pricing rules of the quote calculator (kept apart from the page so they read as one unit).
const PLAN_PRICE = { starter: 9, team: 19, business: 39 };

function seatRate(seats) {
  // Volume discount per seat: 10% from 11 seats, 20% from 51 seats.
  if (seats <= 10) return 1.0;
  if (seats <= 50) return 0.9;
  return 0.8;
}

function monthlyTotal(plan, seats, addons, annual) {
  let total = PLAN_PRICE[plan] * seats * seatRate(seats);
  for (const addon of addons) {
    if (addon === "sso") total += 4 * seats;
    if (addon === "audit") total += 49;
    if (addon === "support") total += 99;
  }
  if (annual) total *= 0.85;
  return Math.round(total * 100 + 1e-7) / 100;
}

if (typeof module !== "undefined") module.exports = { monthlyTotal };
