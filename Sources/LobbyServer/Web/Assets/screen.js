// The location screen's live updates: the lobby sends the screen's board as HTML (rendered and
// escaped by the same template as the page) over server-sent events whenever it changes; this
// swaps it in and counts down the tournaments' time left. Without JavaScript the page still
// shows the board as it was read.
'use strict';
(function () {
  const screen = document.getElementById('screen');
  const status = document.getElementById('live-status');
  if (!screen || !window.EventSource) return;

  function show(state, text) {
    status.dataset.state = state;
    status.textContent = text;
  }

  function timeLeft(ms) {
    if (ms <= 0) return 'ending now';
    const minutes = Math.floor(ms / 60000);
    if (minutes < 1) return Math.ceil(ms / 1000) + ' s left';
    if (minutes < 60) return minutes + ' min left';
    const hours = Math.floor(minutes / 60);
    if (hours < 48) return hours + ' h ' + (minutes % 60) + ' min left';
    return Math.floor(hours / 24) + ' days ' + (hours % 24) + ' h left';
  }

  function tick() {
    for (const element of screen.querySelectorAll('[data-ends-at]')) {
      element.textContent = timeLeft(Date.parse(element.dataset.endsAt) - Date.now());
    }
  }

  let source = null;
  function connect() {
    source = new EventSource(screen.dataset.live);
    source.addEventListener('screen', function (event) {
      screen.innerHTML = event.data;
      tick();
      show('live', 'Live');
    });
    source.addEventListener('open', function () { show('live', 'Live'); });
    source.addEventListener('error', function () {
      show('reconnecting', 'Reconnecting…');
      // The browser retries a dropped stream by itself; a refused one is closed for good.
      if (source.readyState === EventSource.CLOSED) setTimeout(connect, 3000);
    });
  }

  connect();
  setInterval(tick, 1000);
})();
