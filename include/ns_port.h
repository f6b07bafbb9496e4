/* A port: the way back to a libuv loop for work another thread did. A thread that finished an
 * item posts it to the item's port; the port's loop wakes (one uv_async for any number of
 * items) and runs each item's done callback there, in the order they were posted. The loop
 * that owns the port counts the items it sent out (ns_port_hold), so that closing the port
 * waits for the last of them.
 *
 * Threads: ns_port_post from any thread; everything else on the port's loop. */
#ifndef NS_PORT_H
#define NS_PORT_H

#include <stdbool.h>
#include <stddef.h>

struct uv_loop_s;

typedef struct ns_port ns_port_t;

/* Embedded in the caller's work item. */
typedef struct ns_port_item {
    struct ns_port_item *next;               /* the port's list (newest first) */
    void (*done)(struct ns_port_item *item); /* runs on the port's loop, once */
} ns_port_item_t;

/* Creates a port on `loop` (a uv_async_t on it). */
ns_port_t *ns_port_new(struct uv_loop_s *loop);

/* An item goes out to another thread: the port stays open until it is back. */
void ns_port_hold(ns_port_t *port);

/* Hands an item back (any thread): its done callback runs on the port's loop. */
void ns_port_post(ns_port_t *port, ns_port_item_t *item);

/* Closes the port once every held item is back (its done ran); the memory is freed when the
 * loop has closed the async handle. The caller must not use the port afterwards. */
void ns_port_close(ns_port_t *port);

/* Items held and not back yet (the loop's count). */
size_t ns_port_in_flight(const ns_port_t *port);

#endif
