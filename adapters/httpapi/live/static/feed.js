// Where the page's live data comes from. The page subscribes to channels of the stream
// (the names of shared/reference/realtime-streams.md section 2, built by `channel` below) and
// receives publications with the stream's abbreviated keys, whichever feed delivers them:
//
//   - streamFeed: the Centrifuge WebSocket endpoint /connection/websocket, through the
//     centrifuge JavaScript client (the API key as the connection token, in the URL and in the
//     connect command, as the public client sends it);
//   - pollFeed: the same channels served by polling the REST operations, for a server without
//     the WebSocket endpoint. It builds the publications the stream would send.
//
// openFeed picks one: the stream, unless it cannot connect within streamWaitMs (or the URL
// says ?feed=poll). Nothing else in the page knows which feed it has.

export const channel = {
  trade: (chain, token) => `dex-trade:${chain}_${token}`,
  tokenStats: (chain, token) => `dex-token-stats:${chain}_${token}`,
  candle: (chain, token, resolution) => `dex-candle:${chain}_${token}_${resolution}`,
  rankingList: (chain, rankingType) => `dex-ranking-list:${chain}_${rankingType}`,
};

const streamWaitMs = 5000;

// openFeed resolves to {kind, subscribe(channel, onData) -> unsubscribe, close()}.
export async function openFeed(key, api, forced) {
  if (forced !== 'poll') {
    const feed = await streamFeed(key, forced === 'ws' ? 0 : streamWaitMs);
    if (feed) return feed;
  }
  return pollFeed(api);
}

// streamFeed resolves to a connected feed, or null when the client did not connect within
// waitMs (0: wait as long as it takes).
function streamFeed(key, waitMs) {
  const scheme = location.protocol === 'https:' ? 'wss://' : 'ws://';
  const url = `${scheme}${location.host}/connection/websocket?token=${encodeURIComponent(key)}`;
  const client = new Centrifuge(url, { token: key, name: 'tokenscope-live' });
  const subs = new Map(); // channel -> {sub, listeners}
  const feed = {
    kind: 'websocket',
    subscribe(ch, onData) {
      let entry = subs.get(ch);
      if (!entry) {
        const sub = client.newSubscription(ch);
        entry = { sub, listeners: new Set() };
        sub.on('publication', (ctx) => entry.listeners.forEach((fn) => fn(ctx.data)));
        sub.on('error', (ctx) => console.warn('subscription', ch, ctx.error));
        subs.set(ch, entry);
        sub.subscribe();
      }
      entry.listeners.add(onData);
      return () => {
        entry.listeners.delete(onData);
        if (entry.listeners.size === 0 && subs.get(ch) === entry) {
          subs.delete(ch);
          entry.sub.unsubscribe();
          client.removeSubscription(entry.sub);
        }
      };
    },
    close() { client.disconnect(); },
  };
  return new Promise((resolve) => {
    let timer = 0;
    client.once('connected', () => { clearTimeout(timer); resolve(feed); });
    if (waitMs > 0) {
      timer = setTimeout(() => { client.disconnect(); resolve(null); }, waitMs);
    }
    client.connect();
  });
}

// pollFeed serves each channel kind from a REST operation, every interval below, and turns
// the REST records into the stream's messages.
const pollEvery = { trade: 1000, stats: 3000, candle: 2000, ranking: 10000 };

function pollFeed(api) {
  const loops = new Map(); // channel -> {listeners, stop}
  return {
    kind: 'polling',
    subscribe(ch, onData) {
      let entry = loops.get(ch);
      if (!entry) {
        entry = { listeners: new Set(), stop: () => {} };
        loops.set(ch, entry);
        const emit = (msg) => entry.listeners.forEach((fn) => fn(msg));
        entry.stop = startPoll(api, ch, emit);
      }
      entry.listeners.add(onData);
      return () => {
        entry.listeners.delete(onData);
        if (entry.listeners.size === 0 && loops.get(ch) === entry) {
          loops.delete(ch);
          entry.stop();
        }
      };
    },
    close() { loops.forEach((e) => e.stop()); loops.clear(); },
  };
}

// every runs fn now and then every ms (never two at once) until the returned stop is called.
function every(ms, fn) {
  let stopped = false;
  let timer = 0;
  const tick = async () => {
    try { await fn(); } catch (err) { console.warn('poll', err); }
    if (!stopped) timer = setTimeout(tick, ms);
  };
  tick();
  return () => { stopped = true; clearTimeout(timer); };
}

function startPoll(api, ch, emit) {
  const [kind, rest] = [ch.slice(0, ch.indexOf(':')), ch.slice(ch.indexOf(':') + 1)];
  const chain = rest.slice(0, rest.indexOf('_'));
  const args = rest.slice(chain.length + 1);
  switch (kind) {
    case 'dex-trade': {
      const seen = new Set();
      return every(pollEvery.trade, async () => {
        const page = await api(`/v2/trade/${chain}?tokenAddress=${encodeURIComponent(args)}&limit=50`);
        for (const tr of page.data.slice().reverse()) {
          const msg = tradeMessage(tr);
          const id = tradeId(msg);
          if (seen.has(id)) continue;
          seen.add(id);
          emit(msg);
        }
      });
    }
    case 'dex-token-stats':
      return every(pollEvery.stats, async () => {
        const list = await api(`/v2/token/${chain}/multi?tokenAddresses=${encodeURIComponent(args)}`);
        if (list.length) emit(statsMessage(list[0]));
      });
    case 'dex-candle': {
      const cut = args.lastIndexOf('_');
      const token = args.slice(0, cut);
      const resolution = args.slice(cut + 1);
      return every(pollEvery.candle, async () => {
        const bars = await api(`/v2/token/${chain}/${encodeURIComponent(token)}/candles?resolution=${resolution}&limit=1`);
        if (!bars.length) return; // limit=1 alone is the current candle
        const last = bars[bars.length - 1];
        emit({ a: token, o: last.open, h: last.high, l: last.low, c: last.close, v: last.volume, r: resolution, t: last.timestamp, n: last.trades ?? 0 });
      });
    }
    case 'dex-ranking-list': {
      // A change signal as much as a list: sent when the ranked addresses differ from the
      // previous poll's (the stream publishes when the board changes).
      let last = null;
      return every(pollEvery.ranking, async () => {
        const list = await api(`/v2/ranking/${chain}/hotTokens/1h`);
        const addrs = list.map((tok) => tok.address).join(',');
        const changed = last !== null && addrs !== last;
        last = addrs;
        if (!changed) return;
        emit(list.map((tok) => ({
          t: { a: tok.address, n: tok.name, s: tok.symbol, iu: tok.imageUrl ?? '' },
          s: { a: tok.address, s: tok.marketData.totalSupply, mc: tok.marketData.marketCapInUsd },
          ts: { a: tok.address, p: tok.marketData.priceInUsd },
        })));
      });
    }
    default:
      console.warn('no REST equivalent for channel', ch);
      return () => {};
  }
}

// tradeId tells one trade from another in the tape (a transaction may hold several trades).
export function tradeId(m) {
  return `${m.h}|${m.bwa}|${m.ba}|${m.sa}`;
}

// tradeMessage is a REST trade record as the dex-trade channel sends it: the buy side is the
// token the wallet received, the sell side the token it gave.
export function tradeMessage(tr) {
  const token = { addr: tr.tokenAddress, amount: tr.tokenAmount, usd: tr.tokenAmountInUsd, name: tr.tokenName, symbol: tr.tokenSymbol };
  const side = { addr: tr.sideTokenAddress, amount: tr.sideTokenAmount, usd: tr.sideTokenAmountInUsd, name: tr.sideTokenName, symbol: tr.sideTokenSymbol };
  const buy = tr.type === 'BUY';
  const [b, s] = buy ? [token, side] : [side, token];
  return {
    a: tr.tokenAddress, t: tr.blockTimestamp, k: buy ? 'buy' : 'sell',
    ba: b.amount, baiu: b.usd, btma: b.addr, btn: b.name, bts: b.symbol, bwa: tr.accountOwnerAddress,
    sa: s.amount, saiu: s.usd, stma: s.addr, stn: s.name, sts: s.symbol, swa: tr.accountOwnerAddress,
    h: tr.transactionSignature,
  };
}

// statsMessage is a v2 token record as the dex-token-stats channel sends it: per window w,
// b/s (buys, sells), be/se (buyers, sellers), bviu/sviu (volumes in USD), oiu/ciu (open and
// close in USD) and tr (trades), each key suffixed with w.
function statsMessage(tok) {
  const m = { a: tok.address, t: Date.now(), p: tok.marketData.priceInUsd };
  for (const [w, s] of Object.entries(tok.stats.periods)) {
    m[`b${w}`] = Number(s.buys);
    m[`s${w}`] = Number(s.sells);
    m[`be${w}`] = Number(s.buyers);
    m[`se${w}`] = Number(s.sellers);
    m[`tr${w}`] = Number(s.trades);
    m[`bviu${w}`] = s.buyVolumeInUsd;
    m[`sviu${w}`] = s.sellVolumeInUsd;
    m[`oiu${w}`] = s.openInUsd;
    m[`ciu${w}`] = s.closeInUsd;
    m[`p${w}`] = s.closeInUsd;
  }
  return m;
}
