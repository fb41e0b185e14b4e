// The history site's filters (templates/viewer/index.html.j2), allowed by this file's hash.
// Without JavaScript the form stays hidden and every run is listed.
(function () {
  "use strict";
  var form = document.getElementById("filters");
  var rows = Array.prototype.slice.call(document.querySelectorAll("#runs tbody tr"));
  var shown = document.getElementById("shown");
  function apply() {
    var status = form.elements.status.value;
    var spec = form.elements.spec.value.trim().toLowerCase();
    var since = form.elements.since.value;
    var count = 0;
    rows.forEach(function (row) {
      var keep = (!status || row.dataset.status === status) &&
        (!spec || row.dataset.spec.toLowerCase().indexOf(spec) >= 0) &&
        (!since || row.dataset.started >= since);
      row.hidden = !keep;
      if (keep) { count += 1; }
    });
    shown.textContent = count + " of " + rows.length + " runs shown";
  }
  form.addEventListener("input", apply);
  form.addEventListener("change", apply);
  form.addEventListener("submit", function (event) { event.preventDefault(); apply(); });
  form.hidden = false;
  apply();
})();
