// The project form in the admin: show the section of the kind of check
// the URL's scheme chooses (its fieldset has the class kind-<scheme>) and
// hide the other kinds' sections. A heartbeat project shows none of them.
// Without this script every section shows, labelled by its schemes.
(function () {
  "use strict";

  function scheme(url) {
    var match = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url.trim());
    return match ? match[1].toLowerCase() : "";
  }

  function heartbeat() {
    var chosen = document.querySelector('input[name="kind"]:checked');
    return chosen !== null && chosen.value === "heartbeat";
  }

  function update(url) {
    var wanted = heartbeat() ? "" : scheme(url.value);
    document.querySelectorAll("fieldset.kind-section").forEach(function (section) {
      var known = wanted === "" || !document.querySelector("fieldset.kind-" + wanted);
      section.hidden = !known && !section.classList.contains("kind-" + wanted);
      if (heartbeat()) {
        section.hidden = true;
      }
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var url = document.getElementById("id_url");
    if (url === null) {
      return;
    }
    url.addEventListener("input", function () { update(url); });
    document.querySelectorAll('input[name="kind"]').forEach(function (radio) {
      radio.addEventListener("change", function () { update(url); });
    });
    update(url);
  });
})();
