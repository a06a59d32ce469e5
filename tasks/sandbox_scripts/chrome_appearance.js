// Runs on chrome://settings/appearance: the appearance mode the Settings page shows, "light",
// "dark", "system" or null, read as OSWorld's chrome_appearance_mode_ui getter reads it: the
// page's own pref values first, then the text of its selected controls; light wins over dark,
// dark over system. (extensions.theme.system_theme 0 counts as light there, and so here.)
() => {
  const found = new Set();
  const schemes = { 0: "system", 1: "light", 2: "dark", system: "system", default: "system",
    device: "system", light: "light", dark: "dark" };
  const prefs = document.querySelector("settings-ui")?.prefs;
  const leaf = (path) => path.split(".").reduce((node, key) => node?.[key], prefs);
  for (const path of ["browser.theme.color_scheme", "browser.theme.color_scheme2"]) {
    const value = leaf(path)?.value;
    const mode = schemes[String(value).toLowerCase()];
    if (mode) found.add(mode);
  }
  const systemTheme = leaf("extensions.theme.system_theme")?.value;
  if ([0, "0", false].includes(systemTheme)) found.add("light");
  if ([1, "1", true].includes(systemTheme)) found.add("dark");

  const roots = [document];
  for (let i = 0; i < roots.length; i++) {
    for (const element of roots[i].querySelectorAll("*")) {
      if (element.shadowRoot) roots.push(element.shadowRoot);
    }
  }
  const chosen = '[selected],[checked],[aria-checked="true"],option:checked';
  for (const root of roots) {
    for (const element of root.querySelectorAll(chosen)) {
      const text = (element.innerText || element.textContent || "").trim().toLowerCase();
      if (!text) continue;
      if (text.includes("light")) found.add("light");
      else if (text.includes("dark")) found.add("dark");
      else if (["device", "system", "default"].some((word) => text.includes(word))) {
        found.add("system");
      }
    }
  }
  return ["light", "dark", "system"].find((mode) => found.has(mode)) ?? null;
}
