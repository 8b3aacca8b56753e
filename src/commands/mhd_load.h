/* mhd_load.h - libmicrohttpd for `mallocwatch serve`, loaded when serve
 * starts (dlopen(3)) rather than linked: the library pulls in GnuTLS,
 * whose loading and constructors cost every mallocwatch process about
 * 1.7 ms of its start (measured: a program linked with libdw, libelf,
 * jansson and libbpf against the same with libmicrohttpd, 300 starts
 * each), which -c runs, the commands that do not serve, paid for
 * nothing.
 *
 * serve_http.c calls the library's functions by their names: after this
 * header each of them names its pointer in mw_mhd, of the type
 * <microhttpd.h> declares.
 */
#ifndef MALLOCWATCH_MHD_LOAD_H
#define MALLOCWATCH_MHD_LOAD_H

#include <stddef.h>
#include <microhttpd.h>

/* The library's file: its soname (ABI 12 since libmicrohttpd 0.9.x). */
#define MW_MHD_SONAME "libmicrohttpd.so.12"

/* The functions serve uses, X(name) each. */
#define MW_MHD_FUNCS(X) \
	X(MHD_start_daemon) X(MHD_stop_daemon) X(MHD_get_daemon_info) \
	X(MHD_get_timeout) X(MHD_run) X(MHD_is_feature_supported) \
	X(MHD_get_connection_info) X(MHD_basic_auth_get_username_password) \
	X(MHD_queue_basic_auth_fail_response) X(MHD_free) \
	X(MHD_lookup_connection_value) X(MHD_queue_response) \
	X(MHD_create_response_from_buffer) \
	X(MHD_create_response_from_buffer_with_free_callback) \
	X(MHD_add_response_header) X(MHD_destroy_response)

#define MW_MHD_PTR(f) __typeof__(f) *f;
struct mw_mhd {
	MW_MHD_FUNCS(MW_MHD_PTR)
};
#undef MW_MHD_PTR

/* Filled by mw_mhd_load(); NULL pointers before. */
extern struct mw_mhd mw_mhd;

/* Load MW_MHD_SONAME and every function of MW_MHD_FUNCS (once; again is
 * a no-op).  0, or -1 with a one-line reason in err (len bytes): the
 * library or a function not found, dlerror()'s words. */
int mw_mhd_load(char *err, size_t len);

/* From here on the names are the pointers (but in mhd_load.c, which
 * fills them). */
#ifndef MW_MHD_LOADER
#define MHD_start_daemon mw_mhd.MHD_start_daemon
#define MHD_stop_daemon mw_mhd.MHD_stop_daemon
#define MHD_get_daemon_info mw_mhd.MHD_get_daemon_info
#define MHD_get_timeout mw_mhd.MHD_get_timeout
#define MHD_run mw_mhd.MHD_run
#define MHD_is_feature_supported mw_mhd.MHD_is_feature_supported
#define MHD_get_connection_info mw_mhd.MHD_get_connection_info
#define MHD_basic_auth_get_username_password mw_mhd.MHD_basic_auth_get_username_password
#define MHD_queue_basic_auth_fail_response mw_mhd.MHD_queue_basic_auth_fail_response
#define MHD_free mw_mhd.MHD_free
#define MHD_lookup_connection_value mw_mhd.MHD_lookup_connection_value
#define MHD_queue_response mw_mhd.MHD_queue_response
#define MHD_create_response_from_buffer mw_mhd.MHD_create_response_from_buffer
#define MHD_create_response_from_buffer_with_free_callback \
	mw_mhd.MHD_create_response_from_buffer_with_free_callback
#define MHD_add_response_header mw_mhd.MHD_add_response_header
#define MHD_destroy_response mw_mhd.MHD_destroy_response
#endif

#endif /* MALLOCWATCH_MHD_LOAD_H */
