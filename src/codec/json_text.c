/* The text Java 5.5.0 keeps for an object or array where a remoting header expects a String
 * (an extFields value): fastjson2 2.0.59 reads the value into a JSONObject / JSONArray and the
 * String is that container's toString(). Measured against the Java NameServer
 * (tests/interop/traces/08_fidelity.jsonl):
 *   - objects keep their first-seen member order; a repeated member replaces the value in
 *     place (LinkedHashMap); a member whose value is null is not written;
 *   - array elements are written in order, null ones as null;
 *   - strings are rewritten as Java text with fastjson2's escapes (ns_json_escape);
 *   - integers keep every digit (BigInteger): leading zeros and the sign of zero go;
 *   - numbers with a fraction keep their digits (BigDecimal.toString, trailing zeros kept);
 *   - numbers with a non-zero exponent become a double (Double.toString; infinite: null).
 * Only strict JSON is read here; fastjson2's lenient extras (single quotes, bare names,
 * missing or trailing commas, "+1", "1e") are refused (docs/compatibility.md). */
#include "ns_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns_common.h"
#include "ns_utf8.h"

/* One member of an object being rewritten: its name and value texts (offsets in `names` and
 * `values`), or a null value (not written). */
typedef struct {
    size_t name_off, name_len;
    size_t value_off, value_len;
    bool null;
} member_t;

static size_t skip_ws(const uint8_t *in, size_t len, size_t i)
{
    while (i < len && in[i] <= 0x20) /* cJSON's rule, so both readers see the same tokens */
        i++;
    return i;
}

/* Java's Double.toString for a finite d: the shortest digits that read back as d (JDK 19+;
 * JDK 17 sometimes prints one more digit, e.g. 2e23), plain between 1e-3 and 1e7, else
 * d.dddE[-]n. */
static void java_double(double d, ns_buf_t *out)
{
    if (d == 0) { /* fastjson2 writes -0.0 as 0.0 */
        ns_buf_append_str(out, "0.0");
        return;
    }
    char tmp[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, d);
        if (strtod(tmp, NULL) == d)
            break;
    }
    /* tmp: [-]D[.DDD]e[+-]XX */
    char digits[24];
    size_t nd = 0;
    const char *p = tmp;
    bool neg = *p == '-';
    if (neg)
        p++;
    for (; *p != 'e'; p++) {
        if (ns_ascii_is_digit((uint8_t)*p))
            digits[nd++] = *p;
    }
    int exp = (int)strtol(p + 1, NULL, 10); /* d = D.DDD x 10^exp */
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    if (neg)
        ns_buf_append_char(out, '-');
    if (exp >= -3 && exp < 7) {
        if (exp < 0) {
            ns_buf_append_str(out, "0.");
            for (int i = -1; i > exp; i--)
                ns_buf_append_char(out, '0');
            ns_buf_append(out, digits, nd);
        } else {
            size_t whole = (size_t)exp + 1;
            for (size_t i = 0; i < whole; i++)
                ns_buf_append_char(out, (char)(i < nd ? digits[i] : '0'));
            ns_buf_append_char(out, '.');
            if (nd > whole)
                ns_buf_append(out, digits + whole, nd - whole);
            else
                ns_buf_append_char(out, '0');
        }
        return;
    }
    ns_buf_append_char(out, digits[0]);
    ns_buf_append_char(out, '.');
    if (nd > 1)
        ns_buf_append(out, digits + 1, nd - 1);
    else
        ns_buf_append_char(out, '0');
    char e[16];
    snprintf(e, sizeof(e), "E%d", exp);
    ns_buf_append_str(out, e);
}

/* How fastjson2 writes the BigDecimal [-]int.frac (toPlainString): the integer part without
 * leading zeros, every fraction digit, no sign on zero. */
static void java_decimal(bool neg, const uint8_t *ip, size_t il, const uint8_t *fp, size_t fl,
                         ns_buf_t *out)
{
    while (il > 1 && ip[0] == '0') {
        ip++;
        il--;
    }
    bool zero = il == 1 && ip[0] == '0';
    for (size_t i = 0; zero && i < fl; i++)
        zero = fp[i] == '0';
    if (neg && !zero)
        ns_buf_append_char(out, '-');
    ns_buf_append(out, ip, il);
    if (fl > 0) {
        ns_buf_append_char(out, '.');
        ns_buf_append(out, fp, fl);
    }
}

static size_t number_text(const uint8_t *in, size_t len, ns_buf_t *out)
{
    size_t i = 0;
    bool neg = in[0] == '-';
    if (neg)
        i++;
    size_t ib = i;
    while (i < len && ns_ascii_is_digit(in[i]))
        i++;
    size_t il = i - ib;
    if (il == 0)
        return 0;
    size_t fb = i, fl = 0;
    if (i < len && in[i] == '.') {
        fb = ++i;
        while (i < len && ns_ascii_is_digit(in[i]))
            i++;
        fl = i - fb;
        if (fl == 0)
            return 0;
    }
    long exp = 0;
    if (i < len && (in[i] == 'e' || in[i] == 'E')) {
        i++;
        bool eneg = i < len && in[i] == '-';
        if (i < len && (in[i] == '-' || in[i] == '+'))
            i++;
        size_t eb = i;
        while (i < len && ns_ascii_is_digit(in[i])) {
            if (exp < 100000)
                exp = exp * 10 + (in[i] - '0');
            i++;
        }
        if (i == eb)
            return 0;
        if (eneg)
            exp = -exp;
    }
    if (out == NULL)
        return i;
    if (exp != 0) {
        char tmp[512];
        if (i >= sizeof(tmp))
            return 0;
        memcpy(tmp, in, i);
        tmp[i] = '\0';
        double d = strtod(tmp, NULL);
        if (isinf(d))
            ns_buf_append_str(out, "null");
        else
            java_double(d, out);
        return i;
    }
    java_decimal(neg, in + ib, il, in + fb, fl, out);
    return i;
}

static size_t string_text(const uint8_t *in, size_t len, bool name, ns_buf_t *out)
{
    ns_buf_t text = NS_BUF_INIT;
    size_t n = ns_json_read_string(in, len, name, &text);
    if (n > 0 && out != NULL) {
        ns_buf_reserve(out, 2 + NS_JSON_ESC_MAX * text.len);
        uint8_t *w = ns_json_escape(out->data + out->len, (const char *)text.data, text.len);
        out->len = (size_t)(w - out->data);
    }
    ns_buf_free(&text);
    return n;
}

static size_t literal(const uint8_t *in, size_t len, const char *lit, ns_buf_t *out)
{
    size_t n = strlen(lit);
    if (len < n || memcmp(in, lit, n) != 0)
        return 0;
    if (out != NULL)
        ns_buf_append(out, lit, n);
    return n;
}

/* A scalar at in[0]: its text appended to out; *is_null for the literal null. */
static size_t scalar_text(const uint8_t *in, size_t len, ns_buf_t *out, bool *is_null)
{
    *is_null = false;
    switch (in[0]) {
    case '"':
        return string_text(in, len, false, out);
    case 't':
        return literal(in, len, "true", out);
    case 'f':
        return literal(in, len, "false", out);
    case 'n':
        *is_null = true;
        return literal(in, len, "null", out);
    default:
        return in[0] == '-' || ns_ascii_is_digit(in[0]) ? number_text(in, len, out) : 0;
    }
}

/* An open container while its members are read (no recursion: the containers being read form
 * an explicit stack, at most NS_JSON_MAX_DEPTH + 1 deep). An array's text is built as its
 * elements come; an object's members are kept (name and value texts) until it closes, as a
 * repeated member replaces an earlier value in place and null members are left out. */
typedef struct frame {
    bool object;
    size_t elements;
    ns_buf_t text;  /* array: "[a,b"; object: the value texts */
    ns_buf_t names; /* object: the name texts */
    member_t *members;
    size_t count, cap;
    size_t name_off, name_len; /* the member whose value is being read */
} frame_t;

static void frame_free(frame_t *f)
{
    ns_buf_free(&f->text);
    ns_buf_free(&f->names);
    free(f->members);
    memset(f, 0, sizeof(*f));
}

/* Adds a finished value to the open container f. */
static void frame_take(frame_t *f, const uint8_t *text, size_t len, bool is_null)
{
    if (!f->object) {
        if (f->elements++ > 0)
            ns_buf_append_char(&f->text, ',');
        ns_buf_append(&f->text, text, len);
        return;
    }
    size_t k = 0;
    while (k < f->count && !(f->members[k].name_len == f->name_len &&
                             memcmp(f->names.data + f->members[k].name_off,
                                    f->names.data + f->name_off, f->name_len) == 0))
        k++;
    if (k == f->count) {
        if (f->count == f->cap) {
            f->cap = f->cap ? f->cap * 2 : 8;
            f->members = ns_xrealloc(f->members, f->cap * sizeof(*f->members));
        }
        f->members[f->count++] = (member_t){f->name_off, f->name_len, 0, 0, false};
    }
    /* LinkedHashMap.put: the old position, the new value */
    f->members[k].value_off = f->text.len;
    f->members[k].value_len = len;
    f->members[k].null = is_null;
    ns_buf_append(&f->text, text, len);
    f->elements++;
}

/* The text of the container f, now closed, into out. */
static void frame_close(frame_t *f, ns_buf_t *out)
{
    if (!f->object) {
        ns_buf_append_char(&f->text, ']');
        ns_buf_append(out, f->text.data, f->text.len);
        return;
    }
    ns_buf_append_char(out, '{');
    bool first = true;
    for (size_t k = 0; k < f->count; k++) {
        if (f->members[k].null)
            continue;
        if (!first)
            ns_buf_append_char(out, ',');
        first = false;
        ns_buf_append(out, f->names.data + f->members[k].name_off, f->members[k].name_len);
        ns_buf_append_char(out, ':');
        ns_buf_append(out, f->text.data + f->members[k].value_off, f->members[k].value_len);
    }
    ns_buf_append_char(out, '}');
}

/* Reads a member name and its ':' at in[*i] into f; false when they are not there. */
static bool member_name(const uint8_t *in, size_t len, size_t *i, frame_t *f)
{
    f->name_off = f->names.len;
    size_t n = string_text(in + *i, len - *i, true, &f->names);
    if (n == 0)
        return false;
    f->name_len = f->names.len - f->name_off;
    *i = skip_ws(in, len, *i + n);
    if (*i >= len || in[*i] != ':')
        return false;
    *i = skip_ws(in, len, *i + 1);
    return true;
}

static size_t value_text(const uint8_t *in, size_t len, ns_buf_t *out)
{
    frame_t *stack = ns_xcalloc(NS_JSON_MAX_DEPTH + 1, sizeof(*stack));
    size_t depth = 0, i = 0, rc = 0;
    ns_buf_t value = NS_BUF_INIT; /* the value just finished */
    for (;;) {
        /* A value starts at in[i]. */
        bool is_null = false;
        if (i < len && (in[i] == '{' || in[i] == '[')) {
            if (depth > NS_JSON_MAX_DEPTH)
                goto out;
            frame_t *f = &stack[depth++];
            f->object = in[i] == '{';
            if (!f->object)
                ns_buf_append_char(&f->text, '[');
            i = skip_ws(in, len, i + 1);
            if (i < len && in[i] == (f->object ? '}' : ']')) {
                i++;
                ns_buf_free(&value);
                frame_close(f, &value);
                frame_free(f);
                depth--;
            } else {
                if (f->object && !member_name(in, len, &i, f))
                    goto out;
                continue;
            }
        } else {
            ns_buf_free(&value);
            size_t n = i < len ? scalar_text(in + i, len - i, &value, &is_null) : 0;
            if (n == 0)
                goto out;
            i += n;
        }
        /* value holds a finished value: it goes to the container it is in, which then goes on
         * with a ',' or ends; an ended container is a finished value for its own container. */
        for (;;) {
            if (depth == 0) {
                if (out != NULL)
                    ns_buf_append(out, value.data, value.len);
                rc = i;
                goto out;
            }
            frame_t *f = &stack[depth - 1];
            frame_take(f, value.data, value.len, is_null);
            i = skip_ws(in, len, i);
            if (i < len && in[i] == ',') {
                i = skip_ws(in, len, i + 1);
                if (f->object && !member_name(in, len, &i, f))
                    goto out;
                break; /* the next value */
            }
            if (i >= len || in[i] != (f->object ? '}' : ']'))
                goto out;
            i++;
            ns_buf_free(&value);
            frame_close(f, &value);
            frame_free(f);
            depth--;
            is_null = false;
        }
    }
out:
    for (size_t d = 0; d < depth; d++)
        frame_free(&stack[d]);
    free(stack);
    ns_buf_free(&value);
    return rc;
}

/* fastjson2's String reader unwraps an array of one string or null: ["a"] is "a", [null] is
 * null. Returns the length of such an array and sets *str / *str_len to the string literal
 * (NULL for null); 0 otherwise. */
static size_t single_string_array(const uint8_t *in, size_t len, const uint8_t **str,
                                  size_t *str_len)
{
    if (len == 0 || in[0] != '[')
        return 0;
    size_t i = skip_ws(in, len, 1), n;
    if (i < len && in[i] == '"') {
        n = string_text(in + i, len - i, false, NULL);
        *str = in + i;
    } else {
        n = literal(in + i, len - i, "null", NULL);
        *str = NULL;
    }
    if (n == 0)
        return 0;
    *str_len = n;
    i = skip_ws(in, len, i + n);
    return i < len && in[i] == ']' ? i + 1 : 0;
}

size_t ns_json_string_value(const uint8_t *in, size_t len, ns_buf_t *out, bool *is_null)
{
    *is_null = false;
    const uint8_t *str;
    size_t str_len, n = single_string_array(in, len, &str, &str_len);
    if (n > 0) {
        *is_null = str == NULL;
        if (str != NULL && ns_json_read_string(str, str_len, false, out) == 0)
            return 0;
        return n;
    }
    return value_text(in, len, out);
}

bool ns_json_member_value(const uint8_t *in, size_t len, size_t index, const uint8_t **value,
                          size_t *value_len)
{
    size_t i = skip_ws(in, len, 0);
    if (i >= len || in[i] != '{')
        return false;
    i = skip_ws(in, len, i + 1);
    for (size_t k = 0; i < len && in[i] != '}'; k++) {
        size_t n = string_text(in + i, len - i, true, NULL);
        if (n == 0)
            return false;
        i = skip_ws(in, len, i + n);
        if (i >= len || in[i] != ':')
            return false;
        i = skip_ws(in, len, i + 1);
        n = value_text(in + i, len - i, NULL);
        if (n == 0)
            return false;
        if (k == index) {
            *value = in + i;
            *value_len = n;
            return true;
        }
        i = skip_ws(in, len, i + n);
        if (i < len && in[i] == ',')
            i = skip_ws(in, len, i + 1);
    }
    return false;
}

size_t ns_json_value_text(const uint8_t *in, size_t len, ns_buf_t *out)
{
    return value_text(in, len, out);
}
