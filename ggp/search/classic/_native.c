/*
 * Native inner loops of the classic searches (a CPython extension built at first use by
 * ggp/search/classic/native.py, with the same builder as the propnet kernel). Each
 * function here has a pure-Python twin that gives the same answers; these only make the
 * hottest loops cheaper. Nothing here is game-specific.
 *
 * puct(counts, totals, priors, first, scale) -> int
 *     The index maximising PUCT's score over every move of one role at one node, with
 *     the same arithmetic, in the same order, as MCTS._puct's Python loop (so the same
 *     doubles and the same pick, ties to the lowest index):
 *         q = n ? total / (100.0 * n) : first
 *         score = q + scale * prior / (1 + n)
 *     counts: list of int, totals and priors: lists of float, all of one length.
 *
 * select(search, root, noisy, fast, c, max_path) -> (path, leaf, steps)
 *     MCTS._select_python's walk from root to the node to value, on the search's own
 *     _Node objects (attributes read and written by name, as Python would): visits
 *     counted on the way down, the path [(node, picks, position)], the leaf, the nodes
 *     traversed. Each node's picks come from the search's _pick (a call back into
 *     Python) unless ``fast``: then PUCT over every move of every chooser, as _pick
 *     does it when the search has a prior, no solver and no chance (the root's priors
 *     replaced by ``noisy[1]`` where ``noisy`` is (root, priors)). New nodes come from
 *     the search's _expand and _child, in Python.
 *
 * backup(path, leaf, value) -> None
 *     MCTS._backup without the solver: the value vector added to the leaf's value sums
 *     and, up the path, to each node's value sums and its choosers' picked moves.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>

/* No fused multiply-adds: the Python twin rounds after each operation. */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#define NATIVE_ABI 1

static int as_double(PyObject *item, double *out) {
    if (PyFloat_CheckExact(item)) {
        *out = PyFloat_AS_DOUBLE(item);
        return 0;
    }
    *out = PyFloat_AsDouble(item);
    return (*out == -1.0 && PyErr_Occurred()) ? -1 : 0;
}

/* The PUCT pick over lists (see puct above); -1 with an exception set on bad input. */
static Py_ssize_t puct_best(PyObject *counts, PyObject *totals, PyObject *priors, double first,
                            double scale) {
    if (!PyList_CheckExact(counts) || !PyList_CheckExact(totals) || !PyList_CheckExact(priors)) {
        PyErr_SetString(PyExc_TypeError, "puct: counts, totals and priors must be lists");
        return -1;
    }
    Py_ssize_t size = PyList_GET_SIZE(counts);
    if (PyList_GET_SIZE(totals) != size || PyList_GET_SIZE(priors) != size) {
        PyErr_SetString(PyExc_ValueError, "puct: counts, totals and priors differ in length");
        return -1;
    }
    Py_ssize_t best = -1;
    double best_score = -INFINITY;
    for (Py_ssize_t i = 0; i < size; i++) {
        long n = PyLong_AsLong(PyList_GET_ITEM(counts, i));
        if (n == -1 && PyErr_Occurred()) return -1;
        double total, prior;
        if (as_double(PyList_GET_ITEM(totals, i), &total) < 0) return -1;
        if (as_double(PyList_GET_ITEM(priors, i), &prior) < 0) return -1;
        double q = n ? total / (100.0 * (double)n) : first;
        double score = q + scale * prior / (double)(1 + n);
        if (score > best_score) {
            best = i;
            best_score = score;
        }
    }
    return best;
}

static PyObject *native_puct(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "puct(counts, totals, priors, first, scale)");
        return NULL;
    }
    double first = PyFloat_AsDouble(args[3]);
    if (first == -1.0 && PyErr_Occurred()) return NULL;
    double scale = PyFloat_AsDouble(args[4]);
    if (scale == -1.0 && PyErr_Occurred()) return NULL;
    Py_ssize_t best = puct_best(args[0], args[1], args[2], first, scale);
    return best < 0 && PyErr_Occurred() ? NULL : PyLong_FromSsize_t(best);
}

/* ------------------------------------------------------------------ select, backup */

static PyObject *s_proven, *s_counts, *s_totals, *s_priors, *s_visits, *s_children,
    *s_value_sum, *s_info, *s_strides, *s_expand, *s_pick, *s_child, *one;

/* obj.name += 1 */
static int increment_attr(PyObject *obj, PyObject *name) {
    PyObject *v = PyObject_GetAttr(obj, name);
    if (!v) return -1;
    PyObject *w = PyNumber_Add(v, one);
    Py_DECREF(v);
    if (!w) return -1;
    int rc = PyObject_SetAttr(obj, name, w);
    Py_DECREF(w);
    return rc;
}

/* list[i] += value */
static int add_to_item(PyObject *list, Py_ssize_t i, PyObject *value) {
    if (!PyList_Check(list) || i < 0 || i >= PyList_GET_SIZE(list)) {
        PyErr_SetString(PyExc_IndexError, "native search: a move index out of range");
        return -1;
    }
    PyObject *w = PyNumber_Add(PyList_GET_ITEM(list, i), value);
    if (!w) return -1;
    return PyList_SetItem(list, i, w); /* steals w */
}

/* The fast pick (select's docstring): a new (picks, position) tuple, or NULL. */
static PyObject *fast_pick(PyObject *node, PyObject *noisy, double c) {
    PyObject *counts = NULL, *totals = NULL, *priors = NULL, *visits_obj = NULL,
             *value_sum = NULL, *info = NULL, *strides = NULL, *picks = NULL, *result = NULL;
    counts = PyObject_GetAttr(node, s_counts);
    totals = counts ? PyObject_GetAttr(node, s_totals) : NULL;
    if (!totals) goto done;
    if (noisy != Py_None && PyTuple_GET_ITEM(noisy, 0) == node) {
        priors = PyTuple_GET_ITEM(noisy, 1);
        Py_INCREF(priors);
    } else {
        priors = PyObject_GetAttr(node, s_priors);
    }
    if (!priors) goto done;
    if (!PyDict_Check(counts) || !PyDict_Check(totals) || !PyDict_Check(priors)) {
        PyErr_SetString(PyExc_TypeError, "native select: a node's statistics are not dicts");
        goto done;
    }
    visits_obj = PyObject_GetAttr(node, s_visits);
    value_sum = visits_obj ? PyObject_GetAttr(node, s_value_sum) : NULL;
    info = value_sum ? PyObject_GetAttr(node, s_info) : NULL;
    strides = info ? PyObject_GetAttr(info, s_strides) : NULL;
    if (!strides) goto done;
    long visits = PyLong_AsLong(visits_obj);
    if (visits == -1 && PyErr_Occurred()) goto done;
    picks = PyTuple_New(PyDict_GET_SIZE(counts));
    if (!picks) goto done;
    Py_ssize_t pos = 0, k = 0, position = 0;
    PyObject *key, *role_counts;
    while (PyDict_Next(counts, &pos, &key, &role_counts)) {
        Py_ssize_t r = PyLong_AsSsize_t(key);
        if (r == -1 && PyErr_Occurred()) goto done;
        PyObject *role_totals = PyDict_GetItemWithError(totals, key);
        PyObject *role_priors = role_totals ? PyDict_GetItemWithError(priors, key) : NULL;
        if (!role_priors) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_KeyError, "native select: a role's statistics");
            goto done;
        }
        long tried = 0;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(role_counts); i++) {
            long n = PyLong_AsLong(PyList_GET_ITEM(role_counts, i));
            if (n == -1 && PyErr_Occurred()) goto done;
            tried += n;
        }
        double first = 0.5;
        if (visits) {
            double sum;
            if (!PyList_Check(value_sum) || r < 0 || r >= PyList_GET_SIZE(value_sum)) {
                PyErr_SetString(PyExc_IndexError, "native select: a role index out of range");
                goto done;
            }
            if (as_double(PyList_GET_ITEM(value_sum, r), &sum) < 0) goto done;
            first = sum / (100.0 * (double)visits);
        }
        double scale = c * sqrt((double)(tried > 1 ? tried : 1));
        Py_ssize_t choice = puct_best(role_counts, role_totals, role_priors, first, scale);
        if (choice < 0) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "native select: a role without moves");
            goto done;
        }
        PyObject *index = PyLong_FromSsize_t(choice);
        if (!index) goto done;
        PyTuple_SET_ITEM(picks, k++, index);
        if (!PyTuple_Check(strides) || r >= PyTuple_GET_SIZE(strides)) {
            PyErr_SetString(PyExc_IndexError, "native select: a role without a stride");
            goto done;
        }
        Py_ssize_t stride = PyLong_AsSsize_t(PyTuple_GET_ITEM(strides, r));
        if (stride == -1 && PyErr_Occurred()) goto done;
        position += choice * stride;
    }
    PyObject *where = PyLong_FromSsize_t(position);
    if (where) result = PyTuple_Pack(2, picks, where);
    Py_XDECREF(where);
done:
    Py_XDECREF(counts);
    Py_XDECREF(totals);
    Py_XDECREF(priors);
    Py_XDECREF(visits_obj);
    Py_XDECREF(value_sum);
    Py_XDECREF(info);
    Py_XDECREF(strides);
    Py_XDECREF(picks);
    return result;
}

/* One step of select at an unproven, expanded node: count the visit and the picks, append
   to path, return the child (new reference) or NULL. */
static PyObject *descend(PyObject *search, PyObject *node, PyObject *path, PyObject *noisy,
                         int fast, double c) {
    PyObject *choice = fast ? fast_pick(node, noisy, c) : PyObject_CallMethodOneArg(search, s_pick, node);
    if (!choice) return NULL;
    PyObject *child = NULL, *counts = NULL, *children = NULL, *entry = NULL;
    if (!PyTuple_Check(choice) || PyTuple_GET_SIZE(choice) != 2 || !PyTuple_Check(PyTuple_GET_ITEM(choice, 0))) {
        PyErr_SetString(PyExc_TypeError, "native select: _pick must return (picks, position)");
        goto done;
    }
    PyObject *picks = PyTuple_GET_ITEM(choice, 0), *position = PyTuple_GET_ITEM(choice, 1);
    if (increment_attr(node, s_visits) < 0) goto done;
    counts = PyObject_GetAttr(node, s_counts);
    if (!counts) goto done;
    if (!PyDict_Check(counts) || PyDict_GET_SIZE(counts) != PyTuple_GET_SIZE(picks)) {
        PyErr_SetString(PyExc_ValueError, "native select: picks do not match the node's choosers");
        goto done;
    }
    Py_ssize_t pos = 0, k = 0;
    PyObject *key, *role_counts;
    while (PyDict_Next(counts, &pos, &key, &role_counts)) {
        Py_ssize_t i = PyLong_AsSsize_t(PyTuple_GET_ITEM(picks, k++));
        if (i == -1 && PyErr_Occurred()) goto done;
        if (add_to_item(role_counts, i, one) < 0) goto done;
    }
    entry = PyTuple_Pack(3, node, picks, position);
    if (!entry || PyList_Append(path, entry) < 0) goto done;
    children = PyObject_GetAttr(node, s_children);
    if (!children) goto done;
    if (!PyDict_Check(children)) {
        PyErr_SetString(PyExc_TypeError, "native select: a node's children are not a dict");
        goto done;
    }
    child = PyDict_GetItemWithError(children, position);
    if (child) {
        Py_INCREF(child);
    } else if (!PyErr_Occurred()) {
        child = PyObject_CallMethodObjArgs(search, s_child, node, position, NULL);
    }
done:
    Py_DECREF(choice);
    Py_XDECREF(counts);
    Py_XDECREF(children);
    Py_XDECREF(entry);
    return child;
}

static PyObject *native_select(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "select(search, root, noisy, fast, c, max_path)");
        return NULL;
    }
    PyObject *search = args[0], *root = args[1], *noisy = args[2];
    if (noisy != Py_None && (!PyTuple_Check(noisy) || PyTuple_GET_SIZE(noisy) != 2)) {
        PyErr_SetString(PyExc_TypeError, "select: noisy must be None or (node, priors)");
        return NULL;
    }
    int fast = PyObject_IsTrue(args[3]);
    if (fast < 0) return NULL;
    double c = PyFloat_AsDouble(args[4]);
    if (c == -1.0 && PyErr_Occurred()) return NULL;
    Py_ssize_t max_path = PyLong_AsSsize_t(args[5]);
    if (max_path == -1 && PyErr_Occurred()) return NULL;
    PyObject *path = PyList_New(0);
    if (!path) return NULL;
    PyObject *node = root;
    Py_INCREF(node);
    long steps = 0;
    for (;;) {
        steps++;
        PyObject *proven = PyObject_GetAttr(node, s_proven);
        if (!proven) goto fail;
        int is_proven = proven != Py_None;
        Py_DECREF(proven);
        if (is_proven) break;
        PyObject *counts = PyObject_GetAttr(node, s_counts);
        if (!counts) goto fail;
        int expanded = counts != Py_None;
        Py_DECREF(counts);
        if (!expanded) {
            PyObject *visits = PyObject_GetAttr(node, s_visits);
            if (!visits) goto fail;
            int seen = PyObject_IsTrue(visits);
            Py_DECREF(visits);
            if (seen < 0) goto fail;
            if (!seen && node != root) break;
            PyObject *done = PyObject_CallMethodOneArg(search, s_expand, node);
            if (!done) goto fail;
            Py_DECREF(done);
        }
        if (PyList_GET_SIZE(path) >= max_path) break;
        PyObject *child = descend(search, node, path, noisy, fast, c);
        if (!child) goto fail;
        Py_DECREF(node);
        node = child;
    }
    if (increment_attr(node, s_visits) < 0) goto fail;
    PyObject *result = Py_BuildValue("(NNl)", path, node, steps);
    return result;
fail:
    Py_DECREF(path);
    Py_DECREF(node);
    return NULL;
}

/* each of sums[r] += value[r] */
static int add_vector(PyObject *sums, PyObject *value) {
    if (!PyList_Check(sums) || PyList_GET_SIZE(sums) != PyTuple_GET_SIZE(value)) {
        PyErr_SetString(PyExc_ValueError, "native backup: a value of the wrong length");
        return -1;
    }
    for (Py_ssize_t r = 0; r < PyTuple_GET_SIZE(value); r++)
        if (add_to_item(sums, r, PyTuple_GET_ITEM(value, r)) < 0) return -1;
    return 0;
}

static PyObject *native_backup(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 3 || !PyList_Check(args[0]) || !PyTuple_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "backup(path: list, leaf, value: tuple)");
        return NULL;
    }
    PyObject *path = args[0], *value = args[2];
    PyObject *sums = PyObject_GetAttr(args[1], s_value_sum);
    if (!sums) return NULL;
    int rc = add_vector(sums, value);
    Py_DECREF(sums);
    if (rc < 0) return NULL;
    for (Py_ssize_t k = PyList_GET_SIZE(path) - 1; k >= 0; k--) {
        PyObject *entry = PyList_GET_ITEM(path, k);
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 3) {
            PyErr_SetString(PyExc_TypeError, "native backup: a path entry is not (node, picks, position)");
            return NULL;
        }
        PyObject *node = PyTuple_GET_ITEM(entry, 0), *picks = PyTuple_GET_ITEM(entry, 1);
        PyObject *totals = PyObject_GetAttr(node, s_totals);
        if (!totals) return NULL;
        if (!PyDict_Check(totals) || !PyTuple_Check(picks)) {
            Py_DECREF(totals);
            PyErr_SetString(PyExc_TypeError, "native backup: a node's totals are not a dict");
            return NULL;
        }
        Py_ssize_t pos = 0, i = 0;
        PyObject *key, *role_totals;
        while (PyDict_Next(totals, &pos, &key, &role_totals) && i < PyTuple_GET_SIZE(picks)) {
            Py_ssize_t r = PyLong_AsSsize_t(key);
            Py_ssize_t move = PyLong_AsSsize_t(PyTuple_GET_ITEM(picks, i++));
            if ((r == -1 || move == -1) && PyErr_Occurred()) {
                Py_DECREF(totals);
                return NULL;
            }
            if (r < 0 || r >= PyTuple_GET_SIZE(value) || add_to_item(role_totals, move, PyTuple_GET_ITEM(value, r)) < 0) {
                if (!PyErr_Occurred()) PyErr_SetString(PyExc_IndexError, "native backup: a role index out of range");
                Py_DECREF(totals);
                return NULL;
            }
        }
        Py_DECREF(totals);
        sums = PyObject_GetAttr(node, s_value_sum);
        if (!sums) return NULL;
        rc = add_vector(sums, value);
        Py_DECREF(sums);
        if (rc < 0) return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef native_methods[] = {
    {"puct", (PyCFunction)(void (*)(void))native_puct, METH_FASTCALL,
     "puct(counts, totals, priors, first, scale) -> index of the best PUCT score"},
    {"select", (PyCFunction)(void (*)(void))native_select, METH_FASTCALL,
     "select(search, root, noisy, fast, c, max_path) -> (path, leaf, steps)"},
    {"backup", (PyCFunction)(void (*)(void))native_backup, METH_FASTCALL,
     "backup(path, leaf, value) -> None (MCTS._backup without the solver)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef native_module = {
    PyModuleDef_HEAD_INIT, "ggp_search_native",
    "Native inner loops of the classic searches (see _native.c).", -1, native_methods,
    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_ggp_search_native(void) {
    struct { PyObject **where; const char *name; } names[] = {
        {&s_proven, "proven"}, {&s_counts, "counts"}, {&s_totals, "totals"},
        {&s_priors, "priors"}, {&s_visits, "visits"}, {&s_children, "children"},
        {&s_value_sum, "value_sum"}, {&s_info, "info"}, {&s_strides, "strides"},
        {&s_expand, "_expand"}, {&s_pick, "_pick"}, {&s_child, "_child"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!*names[i].where && !(*names[i].where = PyUnicode_InternFromString(names[i].name))) return NULL;
    if (!one && !(one = PyLong_FromLong(1))) return NULL;
    PyObject *module = PyModule_Create(&native_module);
    if (module != NULL && PyModule_AddIntConstant(module, "ABI", NATIVE_ABI) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
