/* Ports (ns_port.h): a list under a mutex and one uv_async that wakes the loop, as libuv's
 * thread pool hands work back to its loop. */
#include "ns_port.h"

#include <pthread.h>
#include <stdlib.h>

#include <uv.h>

#include "ns_common.h"

struct ns_port {
    uv_async_t async;
    pthread_mutex_t lock;     /* guards returned */
    ns_port_item_t *returned; /* posted, not run yet (newest first) */
    size_t in_flight;         /* held and not back (loop thread only) */
    bool closing;             /* ns_port_close was called */
    bool open;                /* the async is open */
};

static void on_closed(uv_handle_t *handle)
{
    ns_port_t *port = handle->data;
    pthread_mutex_destroy(&port->lock);
    free(port);
}

static void close_if_done(ns_port_t *port)
{
    if (port->closing && port->in_flight == 0 && port->open) {
        port->open = false;
        uv_close((uv_handle_t *)&port->async, on_closed);
    }
}

static void on_returned(uv_async_t *handle)
{
    ns_port_t *port = handle->data;
    pthread_mutex_lock(&port->lock);
    ns_port_item_t *list = port->returned;
    port->returned = NULL;
    pthread_mutex_unlock(&port->lock);
    ns_port_item_t *fifo = NULL; /* the list is newest first: run them in posting order */
    while (list != NULL) {
        ns_port_item_t *next = list->next;
        list->next = fifo;
        fifo = list;
        list = next;
    }
    while (fifo != NULL) {
        ns_port_item_t *next = fifo->next;
        NS_ASSERT(port->in_flight > 0);
        port->in_flight--;
        fifo->done(fifo);
        fifo = next;
    }
    close_if_done(port);
}

ns_port_t *ns_port_new(struct uv_loop_s *loop)
{
    ns_port_t *port = ns_xcalloc(1, sizeof(*port));
    pthread_mutex_init(&port->lock, NULL);
    uv_async_init(loop, &port->async, on_returned);
    port->async.data = port;
    port->open = true;
    return port;
}

void ns_port_hold(ns_port_t *port)
{
    NS_ASSERT(!port->closing);
    port->in_flight++;
}

void ns_port_post(ns_port_t *port, ns_port_item_t *item)
{
    pthread_mutex_lock(&port->lock);
    item->next = port->returned;
    port->returned = item;
    /* the async stays open while items are out, so this is always safe */
    uv_async_send(&port->async);
    pthread_mutex_unlock(&port->lock);
}

void ns_port_close(ns_port_t *port)
{
    port->closing = true;
    close_if_done(port);
}

size_t ns_port_in_flight(const ns_port_t *port)
{
    return port->in_flight;
}
