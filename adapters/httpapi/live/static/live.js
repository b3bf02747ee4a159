// The /live page: hot tokens of a chain and one token's candles and trades, kept current by
// the live feed (feed.js). REST gives the starting state; the feed's channels update it.
// No build step: plain ES module, the two vendored bundles are globals (Centrifuge,
// LightweightCharts).
import { channel, openFeed, tradeId, tradeMessage } from './feed.js';

const $ = (id) => document.getElementById(id);
const keyStore = 'tokenscope.live.key';
const hotShown = 20; // rows of the hot list, each with its own stats subscription
const tapeShown = 100;
const hotReloadMs = 10000; // the soonest a ranking-list message re-reads the hot list

const state = { key: '', chain: 'sol', duration: '1h', token: '', resolution: '1m' };
let feed = null; // resolves to the open feed
let hotSubs = [];
let tokenSubs = [];
let hotGeneration = 0;
let tokenGeneration = 0;

// --- key -------------------------------------------------------------------------------------

// takeKey reads the key from ?key= (then keeps it in localStorage and drops it from the
// address bar, so it does not stay in history or screenshots), else from localStorage.
function takeKey() {
  const url = new URL(location.href);
  const given = url.searchParams.get('key');
  if (given) {
    localStorage.setItem(keyStore, given);
    url.searchParams.delete('key');
    history.replaceState(null, '', url);
  }
  return localStorage.getItem(keyStore) || '';
}

function notice(text) {
  $('notice').textContent = text;
  $('notice').hidden = !text;
}

async function api(path) {
  const res = await fetch(path, { headers: { 'X-API-KEY': state.key, Accept: 'application/json' } });
  if (!res.ok) {
    let msg = `${res.status}`;
    try { msg += ` ${(await res.json()).message}`; } catch { /* not JSON */ }
    const err = new Error(`${path}: ${msg}`);
    err.status = res.status;
    throw err;
  }
  return res.json();
}

// --- formatting (display only; values stay decimal strings until here) ------------------------

function num(v) {
  if (v === undefined || v === null || v === '') return NaN;
  return Number(v);
}

// The page's two number formats, used for every number it shows (the chart's axis included):
// fmtPrice for prices (4 significant digits below 1, up to 4 decimals above), fmtAmount for
// token amounts, USD values and volumes (compact from 10k, 2 decimals from 1, 3 significant
// digits below 1). Neither falls back to exponent notation, however small the value.
function fmtPrice(v) {
  const n = num(v);
  if (!Number.isFinite(n)) return '–';
  if (n === 0) return '0';
  if (Math.abs(n) >= 1) return n.toLocaleString('en-US', { maximumFractionDigits: 4 });
  return significant(n, 4);
}

const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 2 });
function fmtAmount(v) {
  const n = num(v);
  if (!Number.isFinite(n)) return '–';
  if (n === 0) return '0';
  if (Math.abs(n) >= 10000) return compact.format(n);
  return Math.abs(n) >= 1 ? n.toLocaleString('en-US', { maximumFractionDigits: 2 }) : significant(n, 3);
}

// significant writes 0 < |n| < 1 with digits significant digits in plain decimals, without
// trailing zeros (as toLocaleString writes the larger ones).
function significant(n, digits) {
  const lead = Math.ceil(-Math.log10(Math.abs(n))); // zeros after the point, plus one
  return n.toFixed(Math.min(100, Math.max(0, lead + digits - 1))).replace(/\.?0+$/, '');
}

function fmtRatio(r) {
  if (!Number.isFinite(r)) return { text: '–', cls: '' };
  return { text: `${r >= 0 ? '+' : ''}${(r * 100).toFixed(2)}%`, cls: r > 0 ? 'up' : r < 0 ? 'down' : '' };
}

function short(s) {
  return s && s.length > 12 ? `${s.slice(0, 5)}…${s.slice(-4)}` : s || '';
}

// ms takes a stream time in seconds or milliseconds (the reference leaves the unit open) to ms.
function ms(t) {
  const n = num(t);
  return n < 1e12 ? n * 1000 : n;
}

function setCell(row, field, text, cls) {
  const td = row.querySelector(`[data-f="${field}"]`);
  if (!td) return;
  td.textContent = text;
  td.className = cls || '';
}

// windowStats reads window w of a dex-token-stats message.
function windowStats(m, w) {
  const buys = num(m[`b${w}`]);
  const sells = num(m[`s${w}`]);
  let trades = num(m[`tr${w}`]);
  if (!Number.isFinite(trades) && Number.isFinite(buys) && Number.isFinite(sells)) trades = buys + sells;
  const volume = num(m[`bviu${w}`]) + num(m[`sviu${w}`]);
  const open = num(m[`oiu${w}`]);
  const close = num(m[`ciu${w}`]);
  return { trades, volume, change: open > 0 ? (close - open) / open : NaN };
}

// --- hash: #chain=sol&d=1h&token=…&r=1m ----------------------------------------------------------

function readHash() {
  const h = new URLSearchParams(location.hash.slice(1));
  state.chain = h.get('chain') || state.chain;
  state.duration = h.get('d') || state.duration;
  state.token = h.get('token') || '';
  state.resolution = h.get('r') || state.resolution;
  $('chain').value = state.chain;
  $('duration').value = state.duration;
  $('resolution').value = state.resolution;
}

function writeHash() {
  const h = new URLSearchParams({ chain: state.chain, d: state.duration });
  if (state.token) h.set('token', state.token);
  if (state.token) h.set('r', state.resolution);
  history.replaceState(null, '', `#${h}`);
}

// --- hot list --------------------------------------------------------------------------------------

async function loadHot() {
  if (!state.key) return;
  const gen = ++hotGeneration;
  hotSubs.forEach((u) => u());
  hotSubs = [];
  const { chain, duration } = state;
  let list;
  try {
    list = await api(`/v2/ranking/${chain}/hotTokens/${duration}`);
  } catch (err) {
    notice(`hot tokens: ${err.message}`);
    return;
  }
  if (gen !== hotGeneration) return;
  $('hot-meta').textContent = `${chain} · ${duration} · ${list.length} ranked`;
  const body = $('hot-rows');
  body.replaceChildren();
  if (!list.length) {
    body.innerHTML = '<tr class="empty"><td colspan="7">no ranked tokens yet</td></tr>';
  }
  list.slice(0, hotShown).forEach((tok, i) => {
    const tr = document.createElement('tr');
    tr.dataset.a = tok.address;
    tr.innerHTML = '<td></td><td><b data-f="symbol"></b><span class="name" data-f="name"></span></td>' +
      '<td data-f="price"></td><td data-f="change"></td><td data-f="trades"></td><td data-f="volume"></td><td data-f="mcap"></td>';
    tr.firstChild.textContent = i + 1;
    tr.querySelector('[data-f="symbol"]').textContent = tok.symbol;
    tr.querySelector('[data-f="name"]').textContent = tok.name;
    const p = tok.stats.periods[duration] || {};
    setCell(tr, 'price', fmtPrice(tok.marketData.priceInUsd));
    const ch = fmtRatio(num(p.priceChangeRatioInUsd));
    setCell(tr, 'change', ch.text, ch.cls);
    setCell(tr, 'trades', p.trades ?? '–');
    setCell(tr, 'volume', fmtAmount(p.totalVolumeInUsd));
    setCell(tr, 'mcap', fmtAmount(tok.marketData.marketCapInUsd));
    tr.classList.toggle('selected', tok.address === state.token);
    tr.addEventListener('click', () => showToken(tok.address));
    body.appendChild(tr);
  });
  const f = await feed;
  if (gen !== hotGeneration) return;
  for (const tok of list.slice(0, hotShown)) {
    hotSubs.push(f.subscribe(channel.tokenStats(chain, tok.address), (m) => updateHotRow(tok.address, m)));
  }
  // The ranking list says the board changed: read this duration's ranking again, not more
  // often than hotReloadMs.
  let last = Date.now();
  let pending = 0;
  hotSubs.push(f.subscribe(channel.rankingList(chain, 'trending'), () => {
    if (pending) return;
    pending = setTimeout(() => { last = Date.now(); loadHot(); }, Math.max(0, last + hotReloadMs - Date.now()));
  }));
  hotSubs.push(() => clearTimeout(pending));
}

function updateHotRow(addr, m) {
  const tr = $('hot-rows').querySelector(`tr[data-a="${CSS.escape(addr)}"]`);
  if (!tr) return;
  if (m.p !== undefined && m.p !== null) setCell(tr, 'price', fmtPrice(m.p));
  const s = windowStats(m, state.duration);
  if (Number.isFinite(s.trades)) {
    const before = tr.querySelector('[data-f="trades"]').textContent;
    setCell(tr, 'trades', String(s.trades));
    if (before !== String(s.trades)) flash(tr);
  }
  if (Number.isFinite(s.volume)) setCell(tr, 'volume', fmtAmount(s.volume));
  if (Number.isFinite(s.change)) {
    const ch = fmtRatio(s.change);
    setCell(tr, 'change', ch.text, ch.cls);
  }
}

function flash(tr) {
  tr.classList.remove('flash');
  void tr.offsetWidth; // restart the animation
  tr.classList.add('flash');
}

// --- token view ----------------------------------------------------------------------------------

const resolutionSeconds = {
  '1s': 1, '15s': 15, '30s': 30, '1m': 60, '3m': 180, '5m': 300, '15m': 900, '30m': 1800,
  '1h': 3600, '2h': 7200, '4h': 14400, '6h': 21600, '8h': 28800, '12h': 43200, '1d': 86400,
};

let chart = null;
let candles = null;
let volumes = null;
let lastBarTime = 0;
let chartReady = false; // the history is on the chart: live bars may follow
let candleFeedSeen = false; // the candle channel has sent a bar: it, not the tape, moves the chart
// Bars by time (s) as the trades build them: the whole chart without a candles operation, else
// the current bar, until the candle channel sends one.
const tradeBars = new Map();

function showToken(addr) {
  state.token = addr;
  writeHash();
  openToken();
}

function closeToken() {
  tokenGeneration++;
  tokenSubs.forEach((u) => u());
  tokenSubs = [];
  state.token = '';
  writeHash();
  $('token').hidden = true;
  $('pick').hidden = false;
  document.querySelectorAll('#hot-rows tr.selected').forEach((r) => r.classList.remove('selected'));
}

async function openToken() {
  const gen = ++tokenGeneration;
  tokenSubs.forEach((u) => u());
  tokenSubs = [];
  const { chain, token } = state;
  document.querySelectorAll('#hot-rows tr[data-a]').forEach((r) => r.classList.toggle('selected', r.dataset.a === token));
  $('token').hidden = false;
  $('pick').hidden = true;
  $('token').dataset.token = token;
  $('token-title').textContent = short(token);
  $('token-address').textContent = token;
  $('token-price').textContent = '';
  $('tape').replaceChildren();
  renderTokenStats({});
  try {
    const [tok] = await api(`/v2/token/${chain}/multi?tokenAddresses=${encodeURIComponent(token)}`);
    if (gen !== tokenGeneration) return;
    if (tok) {
      $('token-title').textContent = `${tok.symbol} · ${tok.name}`;
      $('token-price').textContent = `$${fmtPrice(tok.marketData.priceInUsd)}`;
      const m = {};
      for (const [w, s] of Object.entries(tok.stats.periods)) {
        Object.assign(m, { [`tr${w}`]: s.trades, [`bviu${w}`]: s.buyVolumeInUsd, [`sviu${w}`]: s.sellVolumeInUsd, [`oiu${w}`]: s.openInUsd, [`ciu${w}`]: s.closeInUsd });
      }
      renderTokenStats(m);
    }
  } catch (err) {
    notice(`token: ${err.message}`);
  }
  const f = await feed;
  if (gen !== tokenGeneration) return;
  // Subscribed before the history is read, so nothing falls between the two; the tape drops
  // a trade it already shows.
  tokenSubs.push(f.subscribe(channel.trade(chain, token), (m) => { addTrade(m, true); }));
  tokenSubs.push(f.subscribe(channel.tokenStats(chain, token), (m) => {
    if (m.p !== undefined && m.p !== null) $('token-price').textContent = `$${fmtPrice(m.p)}`;
    renderTokenStats(m);
  }));
  try {
    const page = await api(`/v2/trade/${chain}?tokenAddress=${encodeURIComponent(token)}&limit=${tapeShown}`);
    if (gen !== tokenGeneration) return;
    page.data.slice().reverse().forEach((tr) => addTrade(tradeMessage(tr), false));
  } catch (err) {
    notice(`trades: ${err.message}`);
  }
  await loadChart(gen);
}

function renderTokenStats(m) {
  const dl = $('token-stats');
  dl.replaceChildren();
  for (const w of ['1m', '5m', '1h', '24h']) {
    const s = windowStats(m, w);
    const div = document.createElement('div');
    const ch = fmtRatio(s.change);
    div.innerHTML = '<dt></dt><dd></dd>';
    div.firstChild.textContent = w;
    div.lastChild.textContent = `${Number.isFinite(s.trades) ? s.trades : '–'} trades · $${fmtAmount(s.volume)} · ${ch.text}`;
    div.dataset.w = w;
    dl.appendChild(div);
  }
}

// addTrade puts a dex-trade message on the tape, newest first, once.
function addTrade(m, live) {
  const tape = $('tape');
  const id = tradeId(m);
  for (const row of tape.children) {
    if (row.dataset.id === id) return;
  }
  const token = state.token;
  const bought = m.btma === token;
  const amount = bought ? m.ba : m.sa;
  const usd = bought ? m.baiu : m.saiu;
  const price = num(usd) / num(amount);
  const t = ms(m.t);
  const tr = document.createElement('tr');
  tr.dataset.id = id;
  tr.dataset.h = m.h;
  tr.dataset.t = String(t);
  tr.dataset.price = String(price);
  tr.dataset.usd = String(num(usd));
  tr.innerHTML = '<td></td><td></td><td></td><td></td><td></td><td></td><td></td>';
  const cells = tr.children;
  cells[0].textContent = new Date(t).toLocaleTimeString('en-GB', { hour12: false });
  const kind = String(m.k ?? '').toLowerCase();
  cells[1].textContent = kind;
  cells[1].className = /buy/.test(kind) ? 'up' : /sell/.test(kind) ? 'down' : '';
  cells[2].textContent = fmtPrice(price);
  cells[3].textContent = fmtAmount(amount);
  cells[4].textContent = fmtAmount(usd);
  cells[5].textContent = short(m.bwa || m.swa);
  cells[6].textContent = short(m.h);
  cells[6].title = m.h;
  let before = null;
  for (const row of tape.children) {
    if (Number(row.dataset.t) <= t) { before = row; break; }
  }
  tape.insertBefore(tr, before);
  while (tape.children.length > tapeShown) tape.lastChild.remove();
  if (live) {
    flash(tr);
    if (chartReady && !candleFeedSeen && Number.isFinite(price)) tradeIntoBar(t, price, num(usd));
  }
}

// --- chart -------------------------------------------------------------------------------------

function makeChart() {
  if (chart) return;
  const lc = LightweightCharts;
  chart = lc.createChart($('chart'), {
    autoSize: true,
    layout: { background: { color: '#161c23' }, textColor: '#8593a1' },
    grid: { vertLines: { color: '#1f2831' }, horzLines: { color: '#1f2831' } },
    timeScale: { timeVisible: true, secondsVisible: true },
  });
  candles = chart.addSeries(lc.CandlestickSeries, {
    upColor: '#26a69a', downColor: '#ef5350', borderVisible: false, wickUpColor: '#26a69a', wickDownColor: '#ef5350',
  });
  // The volume histogram sits on an overlay scale under the candles, without a label of its
  // own on the price axis (it would cover the candles' labels).
  volumes = chart.addSeries(lc.HistogramSeries, {
    priceFormat: { type: 'custom', formatter: fmtAmount, minMove: 0.01 }, priceScaleId: '', color: '#3a4a5a',
    lastValueVisible: false, priceLineVisible: false,
  });
  volumes.priceScale().applyOptions({ scaleMargins: { top: 0.8, bottom: 0 } });
  candles.priceScale().applyOptions({ scaleMargins: { top: candleMargins.top, bottom: candleMargins.bottom } });
  candles.applyOptions({ autoscaleInfoProvider: nonNegative, priceFormat: priceFormat(1) });
  // Handles for a reader (or a test) of the chart: the axis is a canvas.
  $('chart').view = { chart, candles, volumes, setBars };
}

// The candles' share of the chart's height left empty above and below their price range.
const candleMargins = { top: 0.1, bottom: 0.25 };

// nonNegative is the candles' autoscale: their price range, widened by 5% when it is a single
// price, and its low raised so that the bottom margin under it does not reach below a price of 0
// (a price that crashed to near 0 put the axis's bottom at about -0.4 of the high). A low bar
// then reaches into that margin, over the volume bars.
function nonNegative(original) {
  const info = original();
  if (!info || !info.priceRange) return info;
  let { minValue: lo, maxValue: hi } = info.priceRange;
  if (!(hi > lo)) {
    const pad = Math.abs(hi) * 0.05 || 1;
    lo = hi - pad;
    hi += pad;
  }
  if (hi <= 0) hi = 1;
  // The axis runs down to about lo - (hi - lo) * k: at least 0 when lo >= hi * k / (1 + k).
  // k is taken 10% larger: the chart rounds its margins to pixels (about 1% of the range off).
  const k = (1.1 * candleMargins.bottom) / (1 - candleMargins.top - candleMargins.bottom);
  lo = Math.max(lo, (hi * k) / (1 + k));
  return { ...info, priceRange: { minValue: lo, maxValue: hi } };
}

// priceFormat fits the axis to price p: ticks a step apart that the labels (fmtPrice) tell
// apart, and never a label below 0.
function priceFormat(p) {
  const digits = p >= 1 ? 4 : Math.min(12, Math.ceil(-Math.log10(p)) + 4);
  return { type: 'custom', minMove: 10 ** -digits, formatter: (v) => fmtPrice(Math.max(0, v)) };
}

function setBars(bars) {
  bars.sort((a, b) => a.time - b.time);
  candles.setData(bars.map(({ time, open, high, low, close }) => ({ time, open, high, low, close })));
  volumes.setData(bars.map(({ time, value }) => ({ time, value })));
  lastBarTime = bars.length ? bars[bars.length - 1].time : 0;
  const ref = bars.length ? bars[bars.length - 1].close : 0;
  markLastBar(bars.length ? bars[bars.length - 1] : null);
  if (ref > 0) candles.applyOptions({ priceFormat: priceFormat(ref) });
  chart.timeScale().fitContent();
}

function putBar(bar) {
  if (bar.time < lastBarTime) return; // the chart only takes the current bar or a newer one
  if (!lastBarTime && bar.close > 0) candles.applyOptions({ priceFormat: priceFormat(bar.close) });
  lastBarTime = bar.time;
  markLastBar(bar);
  candles.update({ time: bar.time, open: bar.open, high: bar.high, low: bar.low, close: bar.close });
  volumes.update({ time: bar.time, value: bar.value });
}

// markLastBar writes the current bar onto the chart's element (data-last-time, seconds, and
// data-last-close), where a reader (or a test) can see it without reading the canvas;
// data-live-bar says what moves it ('candle channel', or 'trades' until that channel sends).
function markLastBar(bar) {
  const el = $('chart');
  el.dataset.lastTime = bar ? String(bar.time) : '';
  el.dataset.lastClose = bar ? String(bar.close) : '';
}

async function loadChart(gen) {
  makeChart();
  const { chain, token, resolution } = state;
  const step = resolutionSeconds[resolution] || 60;
  tradeBars.clear();
  chartReady = false;
  candleFeedSeen = false;
  $('chart').dataset.liveBar = 'trades';
  try {
    const list = await api(`/v2/token/${chain}/${encodeURIComponent(token)}/candles?resolution=${resolution}&limit=300`);
    if (gen !== tokenGeneration) return;
    $('chart').dataset.source = 'candles';
    $('chart-meta').textContent = `${list.length} candle${list.length === 1 ? '' : 's'} from the candles operation`;
    const bars = list.map((c) => ({
      time: Math.floor(ms(c.timestamp) / 1000), open: num(c.open), high: num(c.high), low: num(c.low), close: num(c.close), value: num(c.volume),
    }));
    setBars(bars);
    if (bars.length) tradeBars.set(bars[bars.length - 1].time, { ...bars[bars.length - 1] });
  } catch (err) {
    if (gen !== tokenGeneration) return;
    // No candles operation on this server: the bars come from the trades on the tape.
    $('chart').dataset.source = 'trades';
    $('chart-meta').textContent = `built from the tape's trades (${err.status || 'no'} from the candles operation)`;
    const rows = [...$('tape').children].reverse();
    for (const row of rows) {
      const price = num(row.dataset.price);
      const usd = num(row.dataset.usd);
      if (Number.isFinite(price)) addToBar(Math.floor(Number(row.dataset.t) / 1000 / step) * step, price, usd);
    }
    setBars([...tradeBars.values()].map((b) => ({ ...b })));
  }
  if (gen !== tokenGeneration) return;
  chartReady = true;
  const f = await feed;
  if (gen !== tokenGeneration) return;
  tokenSubs.push(f.subscribe(channel.candle(chain, token, resolution), (c) => {
    const bar = { time: Math.floor(ms(c.t) / 1000), open: num(c.o), high: num(c.h), low: num(c.l), close: num(c.c), value: num(c.v) };
    candleFeedSeen = true;
    $('chart').dataset.liveBar = 'candle channel';
    tradeBars.set(bar.time, { ...bar });
    putBar(bar);
  }));
}

function addToBar(time, price, usd) {
  const bar = tradeBars.get(time);
  const v = Number.isFinite(usd) ? usd : 0;
  if (!bar) {
    tradeBars.set(time, { time, open: price, high: price, low: price, close: price, value: v });
    return tradeBars.get(time);
  }
  bar.high = Math.max(bar.high, price);
  bar.low = Math.min(bar.low, price);
  bar.close = price;
  bar.value += v;
  return bar;
}

function tradeIntoBar(tMs, price, usd) {
  const step = resolutionSeconds[state.resolution] || 60;
  putBar({ ...addToBar(Math.floor(tMs / 1000 / step) * step, price, usd) });
}

// --- start ---------------------------------------------------------------------------------------

async function start() {
  readHash();
  state.key = takeKey();
  $('key').value = '';
  if (!state.key) {
    notice('Enter an API key with the read scope to see live data (it stays in this browser only).');
    return;
  }
  try {
    await api('/v2/whoami');
  } catch (err) {
    notice(err.status === 401 ? 'This API key was refused: enter another one.' : `whoami: ${err.message}`);
    return;
  }
  notice('');
  const forced = new URL(location.href).searchParams.get('feed') || '';
  feed = openFeed(state.key, api, forced);
  feed.then((f) => {
    $('feed').dataset.kind = f.kind;
    $('feed').textContent = `live: ${f.kind}`;
  });
  loadHot();
  if (state.token) openToken();
}

$('keyform').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const key = $('key').value.trim();
  if (!key) return;
  localStorage.setItem(keyStore, key);
  location.reload();
});
$('forget').addEventListener('click', () => {
  localStorage.removeItem(keyStore);
  location.reload();
});
$('chain').addEventListener('change', () => {
  state.chain = $('chain').value;
  closeToken();
  loadHot();
});
$('duration').addEventListener('change', () => {
  state.duration = $('duration').value;
  writeHash();
  loadHot();
});
$('resolution').addEventListener('change', () => {
  state.resolution = $('resolution').value;
  writeHash();
  if (state.token) openToken();
});
$('close-token').addEventListener('click', closeToken);

start();
