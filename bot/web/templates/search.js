// The static copy has no server to search: this hides the catalog's papers that do not match.
(function () {
  var form = document.getElementById("search"), box = document.getElementById("q");
  form.hidden = false;
  form.addEventListener("submit", function (e) { e.preventDefault(); });
  box.addEventListener("input", function () {
    var words = box.value.toLowerCase().split(/\s+/).filter(Boolean);
    document.querySelectorAll("#catalog li.paper").forEach(function (li) {
      var text = li.getAttribute("data-text");
      li.hidden = !words.every(function (w) { return text.indexOf(w) >= 0; });
    });
  });
})();
