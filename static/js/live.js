/* Live pages: every 30 s, fetch this page again and swap its regions
   ([data-live], matched by id) for the new ones, so a page stays current
   without <meta refresh> throwing away what someone is typing.

   - Never while a form field has focus or holds unsent changes: that
     round is skipped, the next one tries again.
   - Open <details> stay open (matched by id).
   - When a region's data-live-summary changes, the polite status line
     says so (aria-live); a quiet update says nothing.
   - "Pause updates" stops the rounds until "Resume updates".
   - Without JavaScript the page has a plain "Refresh" link.
   - "Updated <when>" shows the fresh page's own time, written by the
     server in the one date format of every page.
   Loaded from /static/ with no inline script, as the CSP requires. */
(function () {
  "use strict";

  var controls = document.querySelector("[data-live-controls]");
  if (!controls || !window.fetch || !window.DOMParser) return;
  var every = Number(controls.getAttribute("data-live-seconds") || 30) * 1000;
  var status = controls.querySelector(".live-status");
  var stamp = controls.querySelector(".live-stamp");
  var paused = false;
  var busy = false;

  var pause = document.createElement("button");
  pause.type = "button";
  pause.className = "link live-pause";
  pause.setAttribute("aria-pressed", "false");
  pause.textContent = "Pause updates";
  pause.addEventListener("click", function () {
    paused = !paused;
    pause.setAttribute("aria-pressed", String(paused));
    pause.textContent = paused ? "Resume updates" : "Pause updates";
    say(paused ? "Updates paused." : "Updates resumed.");
  });
  controls.appendChild(document.createTextNode(" "));
  controls.appendChild(pause);

  function say(text) {
    if (status) status.textContent = text;
  }

  function isField(element) {
    return element && /^(INPUT|TEXTAREA|SELECT)$/.test(element.tagName);
  }

  function changed(field) {
    if (field.type === "hidden" || field.type === "submit" || field.type === "button") return false;
    if (field.tagName === "SELECT") {
      // A single select with no option marked selected shows its first.
      var initial = field.multiple ? -1 : 0;
      for (var i = 0; i < field.options.length; i++) {
        var option = field.options[i];
        if (field.multiple && option.selected !== option.defaultSelected) return true;
        if (!field.multiple && option.defaultSelected) initial = i;
      }
      return !field.multiple && field.options.length > 0 && field.selectedIndex !== initial;
    }
    if (field.type === "checkbox" || field.type === "radio") {
      return field.checked !== field.defaultChecked;
    }
    return field.value !== field.defaultValue;
  }

  // Whether someone is at work on the page: a field in focus or edited.
  function working() {
    if (isField(document.activeElement)) return true;
    var fields = document.querySelectorAll("input, textarea, select");
    for (var i = 0; i < fields.length; i++) {
      if (changed(fields[i])) return true;
    }
    return false;
  }

  function summaries(root) {
    var texts = [];
    root.querySelectorAll("[data-live-summary]").forEach(function (element) {
      texts.push(element.getAttribute("data-live-summary"));
    });
    return texts.join(" ");
  }

  function swap(fresh) {
    var before = summaries(document);
    document.querySelectorAll("[data-live]").forEach(function (region) {
      var next = region.id && fresh.getElementById(region.id);
      if (!next) return;
      var open = [];
      region.querySelectorAll("details[open][id]").forEach(function (d) { open.push(d.id); });
      region.replaceWith(document.adoptNode(next));
      open.forEach(function (id) {
        var details = document.getElementById(id);
        if (details) details.open = true;
      });
    });
    if (fresh.title) document.title = fresh.title;
    var after = summaries(document);
    if (after && after !== before) say(after);
    if (stamp) stamp.textContent = "Updated " + rendered(fresh) + ".";
  }

  // When the server made the page, as it writes every date (with the
  // site's zone): the script formats no date itself.
  function rendered(page) {
    var fresh = page.querySelector("[data-live-controls]");
    return (fresh || controls).getAttribute("data-live-rendered");
  }

  function round() {
    if (paused || busy || document.hidden || working()) return;
    busy = true;
    fetch(window.location.href, {
      credentials: "same-origin",
      headers: { "X-Requested-With": "live.js" },
      redirect: "error",
    })
      .then(function (response) {
        if (!response.ok) throw new Error(String(response.status));
        return response.text();
      })
      .then(function (html) {
        // The page may have been edited while the answer travelled.
        if (working()) return;
        swap(new DOMParser().parseFromString(html, "text/html"));
      })
      .catch(function () {
        if (stamp) stamp.textContent = "Could not update; retrying in " + every / 1000 + " s.";
      })
      .finally(function () { busy = false; });
  }

  window.setInterval(round, every);
})();
