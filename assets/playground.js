// Sandgate playground: an account select offers the accounts of the merchant chosen beside it only
// (each listed once), and follows when another merchant is chosen. Without it the server still
// refuses an account of another merchant, with the merchant's accounts in the message.
(function () {
  "use strict";
  var forms = document.querySelectorAll("form[data-playground]");
  Array.prototype.forEach.call(forms, function (form) {
    var merchant = form.querySelector('select[name="merchant_id"]');
    var account = form.querySelector('select[name="account_id"]');
    if (!merchant || !account) return;
    function follow(keepChoice) {
      var chosen = null;
      Array.prototype.forEach.call(account.querySelectorAll("optgroup"), function (group) {
        var mine = group.getAttribute("data-merchant") === merchant.value;
        group.hidden = !mine;
        group.disabled = !mine;
        if (mine) chosen = group;
      });
      var selected = account.options[account.selectedIndex];
      var stillMine = selected && selected.parentNode === chosen;
      if (keepChoice && (stillMine || !selected || selected.parentNode.tagName !== "OPTGROUP")) return;
      if (!stillMine && chosen && chosen.querySelector("option")) chosen.querySelector("option").selected = true;
    }
    merchant.addEventListener("change", function () {
      follow(false);
    });
    follow(true);
  });
})();
