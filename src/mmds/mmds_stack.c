// SPDX-License-Identifier: Apache-2.0
/*
 * The metadata service's guest-facing network stack (mmds.h): ARP for
 * its address, and a TCP server on port 80 that reads one HTTP request
 * per connection and sends one response, then FIN. Frames to the address
 * are taken from the guest's tx path; the stack's replies are pulled by
 * the rx path when the guest has buffers (mmds_stack_rx()), so nothing
 * queues up in host memory beyond the connections' own bounded state.
 * Lost segments are sent again after a timeout (go back to the oldest
 * unacknowledged byte), a connection whose retries run out is dropped,
 * and with every slot taken a new SYN evicts the connection idle the
 * longest. Checksums of the guest's frames are not checked (it may hand
 * them to the device to fill in); ours are always complete.
 */
#include "mmds/mmds.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define ETH_HLEN 14
#define ETH_P_IPV4 0x0800
#define ETH_P_ARP 0x0806
#define IP_HLEN 20
#define TCP_HLEN 20
#define IPPROTO_TCP_ 6
#define HTTP_PORT 80
#define MSS_MAX 1460u
#define MSS_DEFAULT 536u
#define RTO_NS 200000000ull   /* first retransmission, doubling */
#define RETRIES_MAX 6
#define RSTS_MAX 4

#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_PSH 0x08
#define TH_ACK 0x10

struct conn {
	bool used;
	bool established;
	bool fin_rcvd;
	bool need_ack;
	bool done_after_ack;  /* free once the pending ACK went out */
	bool overflow;        /* the request outgrew MMDS_REQ_MAX */
	uint8_t mac[6];
	uint32_t ip;
	uint16_t port;
	uint32_t iss;         /* our SYN's sequence number */
	uint32_t rcv_nxt;
	uint32_t snd_una, snd_nxt;
	uint32_t wnd;         /* the guest's receive window */
	uint16_t mss;
	unsigned int retries;
	uint64_t rto_at;      /* 0: nothing in flight */
	uint64_t active;      /* the last frame either way */
	size_t req_len;
	char *req;            /* MMDS_REQ_MAX, while reading the request */
	char *resp;           /* the answer, once the request is complete */
	size_t resp_len;
	bool resp_ready;      /* resp (possibly empty) is final */
};

struct rst {
	uint8_t mac[6];
	uint32_t ip, seq, ack;
	uint16_t port, our_port;
	bool with_ack;
};

struct mmds_stack {
	pthread_mutex_t lock;
	struct mmds *m;
	uint32_t ip;          /* the service's address, fixed at creation */
	struct conn conns[MMDS_MAX_CONNS];
	unsigned int next;    /* where the next rx round starts */
	bool arp_pending;
	uint8_t arp_mac[6];
	uint32_t arp_ip;
	struct rst rsts[RSTS_MAX];
	unsigned int nr_rsts;
	uint16_t ip_id;
	bool iss_fixed;
	uint32_t iss;
	struct mmds_stats st;
};

static const uint8_t mmds_mac[6] = MMDS_MAC;

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* a < b, a <= b in sequence space. */
static bool seq_lt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static bool seq_le(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) <= 0;
}

static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += get16(p + i);
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

struct mmds_stack *mmds_stack_create(struct mmds *m)
{
	struct mmds_stack *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	pthread_mutex_init(&s->lock, NULL);
	s->m = m;
	s->ip = mmds_ipv4(m);
	return s;
}

static void conn_free(struct mmds_stack *s, struct conn *c)
{
	if (!c->used)
		return;
	free(c->req);
	free(c->resp);
	memset(c, 0, sizeof(*c));
	s->st.connections_destroyed++;
}

void mmds_stack_fix_iss(struct mmds_stack *s, uint32_t iss)
{
	s->iss_fixed = true;
	s->iss = iss;
}

void mmds_stack_reset(struct mmds_stack *s)
{
	unsigned int i;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < MMDS_MAX_CONNS; i++)
		conn_free(s, &s->conns[i]);
	s->arp_pending = false;
	s->nr_rsts = 0;
	pthread_mutex_unlock(&s->lock);
}

void mmds_stack_destroy(struct mmds_stack *s)
{
	if (!s)
		return;
	mmds_stack_reset(s);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void mmds_stack_stats(struct mmds_stack *s, struct mmds_stats *o)
{
	pthread_mutex_lock(&s->lock);
	o->rx_accepted += s->st.rx_accepted;
	o->rx_accepted_err += s->st.rx_accepted_err;
	o->rx_bad_eth += s->st.rx_bad_eth;
	o->rx_count += s->st.rx_count;
	o->tx_bytes += s->st.tx_bytes;
	o->tx_count += s->st.tx_count;
	o->tx_errors += s->st.tx_errors;
	o->tx_frames += s->st.tx_frames;
	o->connections_created += s->st.connections_created;
	o->connections_destroyed += s->st.connections_destroyed;
	pthread_mutex_unlock(&s->lock);
}

/* ---- from the guest ---- */

static void arp_in(struct mmds_stack *s, const uint8_t *a, size_t n,
		   uint32_t ip)
{
	if (n < 28 || get16(a) != 1 || get16(a + 2) != ETH_P_IPV4 ||
	    a[4] != 6 || a[5] != 4 || get16(a + 6) != 1 ||
	    get32(a + 24) != ip) {
		s->st.rx_accepted_err++;
		return;
	}
	memcpy(s->arp_mac, a + 8, 6);
	s->arp_ip = get32(a + 14);
	s->arp_pending = true;
}

static void rst_queue(struct mmds_stack *s, const uint8_t *mac, uint32_t ip,
		      uint16_t port, uint16_t our_port, uint32_t seq,
		      uint32_t ack, bool with_ack)
{
	struct rst *r;

	if (s->nr_rsts == RSTS_MAX)
		return; /* the guest retries: answered then */
	r = &s->rsts[s->nr_rsts++];
	memcpy(r->mac, mac, 6);
	r->ip = ip;
	r->port = port;
	r->our_port = our_port;
	r->seq = seq;
	r->ack = ack;
	r->with_ack = with_ack;
}

static struct conn *conn_find(struct mmds_stack *s, uint32_t ip,
			      uint16_t port)
{
	unsigned int i;

	for (i = 0; i < MMDS_MAX_CONNS; i++)
		if (s->conns[i].used && s->conns[i].ip == ip &&
		    s->conns[i].port == port)
			return &s->conns[i];
	return NULL;
}

/* A free slot, or the one idle the longest made free. */
static struct conn *conn_slot(struct mmds_stack *s)
{
	struct conn *old = &s->conns[0];
	unsigned int i;

	for (i = 0; i < MMDS_MAX_CONNS; i++) {
		if (!s->conns[i].used)
			return &s->conns[i];
		if (s->conns[i].active < old->active)
			old = &s->conns[i];
	}
	conn_free(s, old);
	return old;
}

static uint16_t syn_mss(const uint8_t *opt, size_t n)
{
	size_t i = 0;
	uint16_t mss = MSS_DEFAULT;

	while (i < n) {
		if (opt[i] == 0)
			break;
		if (opt[i] == 1) {
			i++;
			continue;
		}
		if (i + 1 >= n || opt[i + 1] < 2 || i + opt[i + 1] > n)
			break;
		if (opt[i] == 2 && opt[i + 1] == 4)
			mss = get16(opt + i + 2);
		i += opt[i + 1];
	}
	if (mss < 64)
		mss = 64;
	return mss > MSS_MAX ? MSS_MAX : (uint16_t)mss;
}

static void conn_open(struct mmds_stack *s, const uint8_t *mac, uint32_t ip,
		      uint16_t port, uint32_t seq, uint16_t wnd,
		      const uint8_t *opt, size_t optlen, uint64_t now)
{
	struct conn *c = conn_slot(s);
	uint32_t iss;

	if (s->iss_fixed)
		iss = s->iss;
	else if (getrandom(&iss, sizeof(iss), GRND_NONBLOCK) != sizeof(iss))
		iss = (uint32_t)now ^ ((uint32_t)port << 16);
	c->req = malloc(MMDS_REQ_MAX);
	if (!c->req) {
		s->st.rx_accepted_err++;
		return;
	}
	c->used = true;
	memcpy(c->mac, mac, 6);
	c->ip = ip;
	c->port = port;
	c->iss = iss;
	c->snd_una = c->snd_nxt = iss;
	c->rcv_nxt = seq + 1;
	c->wnd = wnd;
	c->mss = syn_mss(opt, optlen);
	c->active = now;
	s->st.connections_created++;
}

/* The request is complete (or can never be): the answer. */
static void conn_answer(struct mmds_stack *s, struct conn *c, uint64_t now)
{
	static const char bad[] = "X";

	if (c->resp_ready)
		return;
	c->resp_len = c->overflow ?
		mmds_http_answer(s->m, bad, 1, now, &c->resp) :
		mmds_http_answer(s->m, c->req, c->req_len, now, &c->resp);
	c->resp_ready = true;
	free(c->req);
	c->req = NULL;
	if (!c->resp_len)
		s->st.tx_errors++; /* out of memory: FIN only */
}

static bool req_complete(const struct conn *c)
{
	return c->req_len >= 4 && (memmem(c->req, c->req_len, "\r\n\r\n", 4) ||
				   memmem(c->req, c->req_len, "\n\n", 2));
}

/* Everything we send, FIN included, is acknowledged. */
static bool all_acked(const struct conn *c)
{
	return c->resp_ready && c->snd_una == c->iss + 2 + c->resp_len;
}

static void tcp_in(struct mmds_stack *s, const uint8_t *mac, uint32_t ip,
		   const uint8_t *t, size_t n, uint64_t now)
{
	size_t off, len, room;
	uint16_t sport, dport, wnd;
	uint32_t seq, ack;
	uint8_t fl;
	struct conn *c;

	if (n < TCP_HLEN || (off = (size_t)(t[12] >> 4) * 4) < TCP_HLEN ||
	    off > n) {
		s->st.rx_accepted_err++;
		return;
	}
	sport = get16(t);
	dport = get16(t + 2);
	seq = get32(t + 4);
	ack = get32(t + 8);
	fl = t[13];
	wnd = get16(t + 14);
	len = n - off;
	c = conn_find(s, ip, sport);
	if (fl & TH_RST) {
		if (c)
			conn_free(s, c);
		return;
	}
	if (dport != HTTP_PORT || (!c && (fl & (TH_SYN | TH_ACK)) != TH_SYN)) {
		/* Nothing listens there, or no such connection. */
		if (fl & TH_ACK)
			rst_queue(s, mac, ip, sport, dport, ack, 0, false);
		else
			rst_queue(s, mac, ip, sport, dport, 0,
				  seq + (uint32_t)len +
					  ((fl & TH_SYN) ? 1 : 0) +
					  ((fl & TH_FIN) ? 1 : 0),
				  true);
		return;
	}
	if ((fl & (TH_SYN | TH_ACK)) == TH_SYN) {
		if (c && !c->established && c->rcv_nxt == seq + 1) {
			c->snd_nxt = c->iss; /* our SYN-ACK again */
			c->rto_at = 0;
			return;
		}
		if (c)
			conn_free(s, c);
		conn_open(s, mac, ip, sport, seq, wnd, t + TCP_HLEN,
			  off - TCP_HLEN, now);
		return;
	}
	if (!c || (fl & TH_SYN)) {
		s->st.rx_accepted_err++;
		return;
	}
	c->active = now;
	if (fl & TH_ACK) {
		if (!c->established && ack == c->iss + 1)
			c->established = true;
		if (seq_lt(c->snd_una, ack) && seq_le(ack, c->snd_nxt)) {
			c->snd_una = ack;
			c->retries = 0;
			c->rto_at = c->snd_una == c->snd_nxt ? 0 :
				    now + RTO_NS;
		}
		c->wnd = wnd;
	}
	if (!c->established)
		return;
	if (len) {
		if (seq == c->rcv_nxt && !c->fin_rcvd) {
			if (c->req && !c->resp_ready) {
				room = MMDS_REQ_MAX - c->req_len;
				if (len > room)
					c->overflow = true;
				memcpy(c->req + c->req_len, t + off,
				       len > room ? room : len);
				c->req_len += len > room ? room : len;
			}
			c->rcv_nxt += (uint32_t)len;
			if (!c->resp_ready && (c->overflow || req_complete(c)))
				conn_answer(s, c, now);
		}
		c->need_ack = true;
	}
	if (fl & TH_FIN) {
		if (seq + (uint32_t)len == c->rcv_nxt && !c->fin_rcvd) {
			c->fin_rcvd = true;
			c->rcv_nxt++;
			conn_answer(s, c, now); /* no request: FIN back */
		}
		c->need_ack = true;
	}
	if (c->fin_rcvd && all_acked(c))
		c->done_after_ack = true;
}

bool mmds_stack_match(struct mmds_stack *s, const uint8_t *f, size_t n)
{
	uint16_t type;

	if (n < MMDS_MATCH_BYTES)
		return false;
	type = get16(f + 12);
	if (type != ETH_P_ARP && type != ETH_P_IPV4)
		return false;
	return type == ETH_P_ARP ? get32(f + ETH_HLEN + 24) == s->ip :
				   get32(f + ETH_HLEN + 16) == s->ip;
}

bool mmds_stack_tx(struct mmds_stack *s, const uint8_t *f, size_t len,
		   uint64_t now_ns)
{
	uint32_t ip = s->ip, src;
	size_t ihl, tot;
	uint16_t type;

	if (len < ETH_HLEN)
		return false;
	type = get16(f + 12);
	if (type == ETH_P_ARP) {
		if (len < ETH_HLEN + 28 || get32(f + ETH_HLEN + 24) != ip)
			return false;
		pthread_mutex_lock(&s->lock);
		s->st.rx_count++;
		s->st.rx_accepted++;
		arp_in(s, f + ETH_HLEN, len - ETH_HLEN, ip);
		pthread_mutex_unlock(&s->lock);
		return true;
	}
	if (type != ETH_P_IPV4 || len < ETH_HLEN + IP_HLEN ||
	    get32(f + ETH_HLEN + 16) != ip)
		return false;
	pthread_mutex_lock(&s->lock);
	s->st.rx_count++;
	f += ETH_HLEN;
	len -= ETH_HLEN;
	ihl = (size_t)(f[0] & 15) * 4;
	tot = get16(f + 2);
	src = get32(f + 12);
	if ((f[0] >> 4) != 4 || ihl < IP_HLEN || tot < ihl || tot > len ||
	    (get16(f + 6) & 0x3fff) || f[9] != IPPROTO_TCP_) {
		/* Not IPv4, a fragment, or not TCP: taken, dropped. */
		s->st.rx_bad_eth++;
	} else {
		s->st.rx_accepted++;
		tcp_in(s, f - ETH_HLEN + 6, src, f + ihl, tot - ihl, now_ns);
	}
	pthread_mutex_unlock(&s->lock);
	return true;
}

/* ---- to the guest ---- */

static size_t eth_head(uint8_t *b, const uint8_t *dst, uint16_t type)
{
	memcpy(b, dst, 6);
	memcpy(b + 6, mmds_mac, 6);
	put16(b + 12, type);
	return ETH_HLEN;
}

static size_t arp_out(struct mmds_stack *s, uint8_t *b, uint32_t ip)
{
	uint8_t *a = b + eth_head(b, s->arp_mac, ETH_P_ARP);

	put16(a, 1);
	put16(a + 2, ETH_P_IPV4);
	a[4] = 6;
	a[5] = 4;
	put16(a + 6, 2);
	memcpy(a + 8, mmds_mac, 6);
	put32(a + 14, ip);
	memcpy(a + 18, s->arp_mac, 6);
	put32(a + 24, s->arp_ip);
	s->arp_pending = false;
	return ETH_HLEN + 28;
}

/* An IPv4 + TCP frame; @data of @n bytes after a 20-byte TCP header (24
 * with the MSS option on a SYN). Return: the frame's length. */
static size_t tcp_out(struct mmds_stack *s, uint8_t *b, const uint8_t *mac,
		      uint32_t src, uint32_t dst, uint16_t sport,
		      uint16_t dport, uint32_t seq, uint32_t ack, uint8_t fl,
		      const void *data, size_t n)
{
	size_t th = (fl & TH_SYN) ? TCP_HLEN + 4 : TCP_HLEN;
	uint8_t *ip = b + eth_head(b, mac, ETH_P_IPV4), *t = ip + IP_HLEN;
	uint32_t sum;

	memset(ip, 0, IP_HLEN + th);
	ip[0] = 0x45;
	put16(ip + 2, (uint16_t)(IP_HLEN + th + n));
	put16(ip + 4, s->ip_id++);
	put16(ip + 6, 0x4000); /* DF */
	ip[8] = 64;
	ip[9] = IPPROTO_TCP_;
	put32(ip + 12, src);
	put32(ip + 16, dst);
	put16(ip + 10, csum_fold(csum_add(0, ip, IP_HLEN)));
	put16(t, sport);
	put16(t + 2, dport);
	put32(t + 4, seq);
	put32(t + 8, ack);
	t[12] = (uint8_t)((th / 4) << 4);
	t[13] = fl;
	put16(t + 14, 0xffff);
	if (fl & TH_SYN) {
		t[20] = 2;
		t[21] = 4;
		put16(t + 22, MSS_MAX);
	}
	if (n)
		memcpy(t + th, data, n);
	sum = csum_add(0, ip + 12, 8);
	sum += IPPROTO_TCP_ + (uint32_t)(th + n);
	sum = csum_add(sum, t, th + n);
	put16(t + 16, csum_fold(sum));
	s->st.tx_frames++;
	s->st.tx_count++;
	s->st.tx_bytes += n;
	return ETH_HLEN + IP_HLEN + th + n;
}

/* The next frame of @c, or 0. */
static size_t conn_out(struct mmds_stack *s, struct conn *c, uint8_t *b,
		       uint32_t ip, uint64_t now)
{
	uint32_t sent = c->snd_nxt - c->iss, avail, k;
	uint8_t fl = TH_ACK;
	const void *data = NULL;
	size_t n = 0, len;

	if (c->rto_at && now >= c->rto_at) {
		if (++c->retries > RETRIES_MAX) {
			s->st.tx_errors++;
			conn_free(s, c);
			return 0;
		}
		c->snd_nxt = c->snd_una; /* back to the oldest unacked */
		c->rto_at = 0;
		sent = c->snd_nxt - c->iss;
	}
	if (sent == 0) {
		fl = TH_SYN | TH_ACK;
	} else if (c->established && c->resp_ready &&
		   sent < 1 + c->resp_len) {
		avail = c->snd_una + c->wnd - c->snd_nxt;
		if ((int32_t)avail > 0) {
			k = (uint32_t)(c->resp_len - (sent - 1));
			k = k < c->mss ? k : c->mss;
			k = k < avail ? k : avail;
			data = c->resp + (sent - 1);
			n = k;
			fl |= TH_PSH;
		}
	} else if (c->established && c->resp_ready &&
		   sent == 1 + c->resp_len) {
		fl |= TH_FIN;
	}
	if (!(fl & (TH_SYN | TH_FIN)) && !n && !c->need_ack) {
		if (c->done_after_ack)
			conn_free(s, c); /* closed both ways, nothing owed */
		return 0;
	}
	len = tcp_out(s, b, c->mac, ip, c->ip, HTTP_PORT, c->port, c->snd_nxt,
		      c->rcv_nxt, fl, data, n);
	c->need_ack = false;
	c->snd_nxt += (uint32_t)n + ((fl & (TH_SYN | TH_FIN)) ? 1 : 0);
	if (c->snd_nxt != c->snd_una && !c->rto_at)
		c->rto_at = now + (RTO_NS << (c->retries < 5 ? c->retries : 5));
	c->active = now;
	if (c->done_after_ack)
		conn_free(s, c);
	return len;
}

size_t mmds_stack_rx(struct mmds_stack *s, uint8_t *buf, size_t cap,
		     uint64_t now_ns)
{
	uint32_t ip = s->ip;
	unsigned int i, k;
	size_t n = 0;

	if (cap < ETH_HLEN + IP_HLEN + TCP_HLEN + 4 + MSS_MAX)
		return 0;
	pthread_mutex_lock(&s->lock);
	if (s->arp_pending) {
		n = arp_out(s, buf, ip);
	} else if (s->nr_rsts) {
		struct rst *r = &s->rsts[--s->nr_rsts];

		n = tcp_out(s, buf, r->mac, ip, r->ip, r->our_port, r->port,
			    r->seq, r->ack,
			    (uint8_t)(TH_RST | (r->with_ack ? TH_ACK : 0)),
			    NULL, 0);
	} else {
		for (k = 0; k < MMDS_MAX_CONNS && !n; k++) {
			i = (s->next + k) % MMDS_MAX_CONNS;
			if (s->conns[i].used)
				n = conn_out(s, &s->conns[i], buf, ip, now_ns);
		}
		s->next = (s->next + 1) % MMDS_MAX_CONNS;
	}
	pthread_mutex_unlock(&s->lock);
	return n;
}

uint64_t mmds_stack_deadline(struct mmds_stack *s)
{
	uint64_t d = 0;
	unsigned int i;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < MMDS_MAX_CONNS; i++)
		if (s->conns[i].used && s->conns[i].rto_at &&
		    (!d || s->conns[i].rto_at < d))
			d = s->conns[i].rto_at;
	pthread_mutex_unlock(&s->lock);
	return d;
}
