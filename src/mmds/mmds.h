/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The metadata service (Firecracker's MMDS): a JSON data store the host
 * sets through the API (PUT/PATCH/GET /mmds, --metadata FILE) and the
 * guest reads over HTTP at a link-local IPv4 address, on the network
 * interfaces mmds-config names. Those interfaces' frames to that address
 * never reach the tap: a small stack of our own (mmds_stack.c) answers
 * ARP and serves TCP port 80, and its replies go into the interface's rx
 * rings.
 *
 * Two parts, one lock each:
 *  - struct mmds (mmds_store.c): the data store, its size limit, the
 *    version (V1: any GET answered; V2: a GET needs a session token from
 *    PUT /latest/api/token) and the tokens. Host and guest side share it.
 *  - struct mmds_stack (mmds_stack.c): one per network interface; its
 *    connections. Everything is bounded whatever the guest sends: at most
 *    MMDS_MAX_CONNS connections, MMDS_REQ_MAX bytes of request each, one
 *    response each (at most the store's limit plus headers), and a
 *    connection that stalls is dropped after its retries.
 *
 *	mmds_create(&m, &mcfg);
 *	mmds_put(m, json, len, err, sizeof(err));          // the host
 *	s = mmds_stack_create(m);                          // per interface
 *	if (mmds_stack_tx(s, frame, len, now))             // a guest frame
 *		...consumed, not for the tap...
 *	n = mmds_stack_rx(s, buf, cap, now);               // a frame back
 */
#ifndef MICROVM_MMDS_MMDS_H
#define MICROVM_MMDS_MMDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Firecracker's default address, 169.254.169.254, host order. */
#define MMDS_DEFAULT_IPV4 0xa9fea9feu
/* The data store's default limit: the API's default payload limit. */
#define MMDS_DEFAULT_LIMIT 51200u
/* A guest's HTTP request (request line and headers). */
#define MMDS_REQ_MAX 4096u
/* Connections at once per interface. */
#define MMDS_MAX_CONNS 16u
/* Session tokens alive at once (the oldest goes first). */
#define MMDS_MAX_TOKENS 64u
/* A token's lifetime, seconds (Firecracker's bounds). */
#define MMDS_TOKEN_TTL_MAX 21600u
/* The MAC the stack answers ARP with (locally administered). */
#define MMDS_MAC { 0x06, 0x6d, 0x6d, 0x64, 0x73, 0x01 }

struct mmds_config {
	unsigned int version;  /* 1 or 2 */
	uint32_t ipv4;         /* host order; 0: MMDS_DEFAULT_IPV4 */
	size_t limit;          /* bytes of the store; 0: MMDS_DEFAULT_LIMIT */
	bool imds_compat;      /* IMDS text even for Accept: application/json */
};

struct mmds;
struct mmds_stack;

/* Counters (Firecracker's "mmds" metrics group). */
struct mmds_stats {
	uint64_t rx_accepted, rx_accepted_err, rx_bad_eth, rx_count;
	uint64_t tx_bytes, tx_count, tx_errors, tx_frames;
	uint64_t connections_created, connections_destroyed;
};

/**
 * mmds_create() - an empty store (not initialized: a PATCH is refused
 * until the first PUT). Return: 0 or -ENOMEM. Context: any thread.
 */
int mmds_create(struct mmds **out, const struct mmds_config *cfg);
void mmds_destroy(struct mmds *m);

/** mmds_configure() - change version, address, limit (a limit of 0
 * keeps the current one). */
void mmds_configure(struct mmds *m, const struct mmds_config *cfg);

/**
 * mmds_put() - PUT /mmds: @json (any JSON value; Firecracker's callers
 * send an object) replaces the store. mmds_patch(): PATCH /mmds, a JSON
 * merge patch (RFC 7396) onto it.
 * Return: 0, or -EINVAL/-E2BIG/-ENOMEM with a one-line @err; on error
 * the store is unchanged. Context: any thread.
 */
int mmds_put(struct mmds *m, const char *json, size_t len, char *err,
	     size_t errlen);
int mmds_patch(struct mmds *m, const char *json, size_t len, char *err,
	       size_t errlen);

/** mmds_get_json() - GET /mmds: the store as malloc'd JSON, or NULL. */
char *mmds_get_json(struct mmds *m);

/**
 * mmds_load_file() - --metadata FILE: mmds_put() of the file's content.
 * Return/Context: as mmds_put().
 */
int mmds_load_file(struct mmds *m, const char *path, char *err,
		   size_t errlen);

/** mmds_ipv4() - the guest-facing address, host order. */
uint32_t mmds_ipv4(struct mmds *m);

/**
 * mmds_http_answer() - the guest's HTTP request @req (@len bytes: the
 * request line and headers through the blank line) answered as a whole
 * HTTP/1.1 response ("Connection: close"), malloc'd in *@out.
 * Return: its length, or 0 when out of memory. Context: any thread.
 */
size_t mmds_http_answer(struct mmds *m, const char *req, size_t len,
			uint64_t now_ns, char **out);

/**
 * mmds_stack_create() - the guest-facing stack of one interface, at the
 * address mmds_configure() gave @m before (the tx path then reads it
 * without the store's lock).
 * Return: it, or NULL when out of memory. Context: any thread.
 */
struct mmds_stack *mmds_stack_create(struct mmds *m);
void mmds_stack_destroy(struct mmds_stack *s);

/**
 * mmds_stack_match() - is a frame beginning with @head (@n bytes: at
 * least MMDS_MATCH_BYTES, else false) for the metadata service: an ARP
 * request for its address, or IPv4 to it? Context: any thread.
 */
#define MMDS_MATCH_BYTES 42u
bool mmds_stack_match(struct mmds_stack *s, const uint8_t *head, size_t n);

/**
 * mmds_stack_tx() - a frame the guest sent (Ethernet header onwards).
 * Return: true when it was for the metadata service (taken: it must not
 * go to the tap), false to send it on. Context: any thread (a lock).
 */
bool mmds_stack_tx(struct mmds_stack *s, const uint8_t *frame, size_t len,
		   uint64_t now_ns);

/**
 * mmds_stack_rx() - the next frame for the guest, at most @cap bytes
 * (the Ethernet frame; @cap at least 1514), written to @buf.
 * Return: its length, or 0 when there is none now.
 * Context: any thread (a lock).
 */
size_t mmds_stack_rx(struct mmds_stack *s, uint8_t *buf, size_t cap,
		     uint64_t now_ns);

/**
 * mmds_stack_deadline() - when mmds_stack_rx() will have a frame to
 * resend though nothing came in (a retransmission), ns on the clock of
 * @now_ns; 0: none. Context: any thread.
 */
uint64_t mmds_stack_deadline(struct mmds_stack *s);

/** mmds_stack_stats() - add the stack's counters to @out. */
void mmds_stack_stats(struct mmds_stack *s, struct mmds_stats *out);

/**
 * mmds_stack_fix_iss() - every connection's initial sequence number is
 * @iss instead of a random one: for tests and fuzzing only, which must
 * be able to acknowledge the stack's SYN.
 */
void mmds_stack_fix_iss(struct mmds_stack *s, uint32_t iss);

/** mmds_stack_reset() - forget every connection (a device reset). */
void mmds_stack_reset(struct mmds_stack *s);

#endif
