/*
 * The native propnet kernel: a generic evaluator of one propositional network.
 *
 * Built at first use by ggp/reasoning/kernel.py (a CPython extension module); when no C
 * compiler is available the pure-Python compiled propnet is used instead, with the same
 * results. Nothing here is game-specific: the network comes in as arrays.
 *
 * Two engines share the network:
 *
 * - Single states, by incremental propagation. The kernel keeps the value of every node
 *   for the state (and joint move) it saw last. Moving to another state flips the base
 *   propositions that differ and propagates only what changes, level by level (a node
 *   is processed once, after all its children: no glitches). AND / OR / NOT gates keep
 *   the count of their true children; a cyclic strongly connected component (positive
 *   recursion, LOOP nodes) is re-solved to its least fixpoint when an input of it
 *   changes. Output propositions (next, legal, sees) are mirrored in a bit set as they
 *   change, so reading a successor state or a legal-move set costs no scan.
 *
 * - Batches, bit-sliced: every node holds W 64-bit words, one bit per lane (state), and
 *   the whole network is evaluated in level order. Random playouts run lanes in
 *   lock-step; a lane whose playout ends takes the next pending one.
 *
 * States cross the boundary as Python ints (bit k = base proposition k), as in the
 * pure-Python backend. Node kinds (ops) are those of ggp.reasoning.propnet.Op.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#if PY_BIG_ENDIAN
#error "the propnet kernel assumes a little-endian machine"
#endif

#define KERNEL_ABI 1

enum { OP_FALSE = 0, OP_TRUE = 1, OP_BASE = 2, OP_INPUT = 3, OP_AND = 4, OP_OR = 5, OP_NOT = 6, OP_LOOP = 7 };

/*
 * The live state of one node in the incremental engine. ``count`` is, for an OR or a NOT,
 * how many of its children are true, and for an AND how many are false: an OR is true
 * when count > 0, an AND or a NOT when count == 0.
 */
typedef struct {
    int32_t count;
    int32_t link;   /* next node queued at the same level, or -1 */
    int32_t level;
    uint8_t op;
    uint8_t val;
    uint8_t queued;
    uint8_t cyclic; /* member of a cyclic component (see Net.scc) */
} Node;

/*
 * A straight-line program for the bit-sliced engine: per node, a header (op | kids << 8),
 * the node, then its kids; a cyclic component is one entry (OP_COMPONENT | id << 8).
 */
#define OP_COMPONENT 15
typedef struct {
    int32_t *code;
    int32_t len;
} Program;

typedef struct {
    PyObject_HEAD
    int32_t n_nodes, n_base, n_inputs, n_roles, n_levels;
    int32_t base_words, slot_words, input_words;
    uint8_t *op;
    int32_t *child_off, *child;   /* CSR: children of each node */
    int32_t *parent_off, *parent; /* CSR: parents (fan-out) of each node */
    int32_t *level;               /* topological level: children have lower levels */
    int32_t *order;               /* all nodes by level; a cyclic component's members together */
    int32_t *scc;                 /* the cyclic component of a node, or -1 */
    int32_t n_scc;
    int32_t *scc_off, *scc_nodes; /* CSR: members of each cyclic component */
    int32_t *base_node;           /* [n_base] node of (true base[k]) or -1 */
    int32_t *input_node;          /* [n_inputs] node of input j or -1 */
    int32_t *next_node;           /* [n_base] node of (next base[k]) */
    int32_t *slot_off, *slot;     /* CSR: output slots each node drives */
    int32_t *move_off;            /* [n_roles + 1] each role's moves in the global move list */
    int32_t *move_input;          /* [n_moves] input index of each move */
    int32_t *legal_node;          /* [n_moves] */
    int32_t *legal_slot0;         /* [n_roles] first slot of each role's legal bits (word aligned) */
    int32_t *sees_off;            /* [n_roles + 1] */
    int32_t *sees_node;           /* [n_percepts] */
    int32_t *sees_slot0;          /* [n_roles] */
    int32_t terminal;
    int32_t *goal_off, *goal_value, *goal_node; /* per role: (value, node) largest first */
    Program state_all, move_all;   /* every node: those no input reaches, then the others */
    Program state_play, move_play; /* the same, only what legal, terminal, goal and next need */
    uint64_t *zobrist;            /* [n_base] */
    PyObject *moves;              /* tuple: per role a tuple of its move terms */
    PyObject *move_index;         /* tuple: per role a dict move term -> index */
    /* incremental engine */
    Node *node;                   /* [n_nodes] the live values, one cache line holds four */
    uint64_t *cur_base, *cur_input, *out_bits, *scratch_base, *scratch_input;
    uint8_t *scc_old;
    int32_t max_scc;
    int32_t *bucket;              /* per level: the first queued node (linked through Node.link) */
    PyObject *last_key;           /* the key object loaded last (a new reference), or NULL */
    int32_t lo, hi;
} Net;

static PyObject *IllegalMove; /* raised with (role index,) */

/* The State class of ggp.reasoning.state_machine, whose instances the kernel makes
   directly (set by set_state_class): its __slots__ key, owner and _hash. */
static PyTypeObject *StateType;
static Py_ssize_t state_key_at, state_owner_at, state_hash_at;

static PyObject *new_state(PyObject *key, PyObject *owner) {
    if (!key) return NULL;
    if (!StateType) {
        Py_DECREF(key);
        PyErr_SetString(PyExc_RuntimeError, "set_state_class was not called");
        return NULL;
    }
    Py_hash_t h = PyObject_Hash(key);
    PyObject *hash = h == -1 ? NULL : PyLong_FromSsize_t(h);
    PyObject *state = hash ? StateType->tp_alloc(StateType, 0) : NULL;
    if (!state) {
        Py_XDECREF(hash);
        Py_DECREF(key);
        return NULL;
    }
    Py_INCREF(owner);
    *(PyObject **)((char *)state + state_key_at) = key; /* the reference passes to the state */
    *(PyObject **)((char *)state + state_owner_at) = owner;
    *(PyObject **)((char *)state + state_hash_at) = hash;
    return state;
}

static Py_ssize_t slot_offset(PyObject *cls, const char *name) {
    PyObject *descr = PyObject_GetAttrString(cls, name);
    if (!descr) return -1;
    if (Py_TYPE(descr) != &PyMemberDescr_Type) {
        Py_DECREF(descr);
        PyErr_Format(PyExc_TypeError, "%s is not a __slots__ member", name);
        return -1;
    }
    PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
    Py_ssize_t offset = member->type == T_OBJECT_EX || member->type == T_OBJECT ? member->offset : -1;
    Py_DECREF(descr);
    if (offset < 0) PyErr_Format(PyExc_TypeError, "%s is not an object slot", name);
    return offset;
}

static PyObject *set_state_class(PyObject *module, PyObject *cls) {
    if (!PyType_Check(cls)) {
        PyErr_SetString(PyExc_TypeError, "set_state_class needs a class");
        return NULL;
    }
    Py_ssize_t key = slot_offset(cls, "key"), owner = slot_offset(cls, "owner"), hash = slot_offset(cls, "_hash");
    if (key < 0 || owner < 0 || hash < 0) return NULL;
    Py_XDECREF(StateType);
    Py_INCREF(cls);
    StateType = (PyTypeObject *)cls;
    state_key_at = key;
    state_owner_at = owner;
    state_hash_at = hash;
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------------ helpers */

static int copy_int32(PyObject *obj, int32_t **out, Py_ssize_t expect, const char *what) {
    Py_buffer view;
    if (PyObject_GetBuffer(obj, &view, PyBUF_SIMPLE) < 0) return -1;
    if (view.len % 4 != 0 || (expect >= 0 && view.len / 4 != expect)) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd int32 values, got %zd bytes", what,
                     expect, view.len);
        PyBuffer_Release(&view);
        return -1;
    }
    *out = (int32_t *)PyMem_Malloc(view.len ? view.len : 4);
    if (!*out) {
        PyBuffer_Release(&view);
        PyErr_NoMemory();
        return -1;
    }
    memcpy(*out, view.buf, view.len);
    PyBuffer_Release(&view);
    return 0;
}

static void *zalloc(size_t n) {
    void *p = PyMem_Calloc(n ? n : 1, 1);
    if (!p) PyErr_NoMemory();
    return p;
}

static inline int get_bit(const uint64_t *bits, int32_t k) { return (int)((bits[k >> 6] >> (k & 63)) & 1); }

/* A Python int (>= 0, < 2**(64*words)) into words, little-endian. */
static int int_to_words(PyObject *obj, uint64_t *words, int32_t n_words) {
    if (!PyLong_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, "a state key must be an int");
        return -1;
    }
    if (n_words == 0) return 0;
#if PY_VERSION_HEX >= 0x030D0000
    Py_ssize_t n = PyLong_AsNativeBytes(obj, words, (Py_ssize_t)n_words * 8,
                                        Py_ASNATIVEBYTES_LITTLE_ENDIAN | Py_ASNATIVEBYTES_UNSIGNED_BUFFER |
                                            Py_ASNATIVEBYTES_REJECT_NEGATIVE);
    if (n < 0) return -1;
    if (n > (Py_ssize_t)n_words * 8) {
        PyErr_SetString(PyExc_OverflowError, "state key too large for this game");
        return -1;
    }
    return 0;
#else
    return _PyLong_AsByteArray((PyLongObject *)obj, (unsigned char *)words, (size_t)n_words * 8, 1, 0);
#endif
}

static PyObject *words_to_int(const uint64_t *words, int32_t n_words) {
    return _PyLong_FromByteArray((const unsigned char *)words, (size_t)n_words * 8, 1, 0);
}

/* --------------------------------------------------------------- incremental engine */

static inline void enqueue(Net *s, int32_t id) {
    Node *n = &s->node[id];
    if (n->queued) return;
    n->queued = 1;
    int32_t level = n->level;
    n->link = s->bucket[level];
    s->bucket[level] = id;
    if (level < s->lo) s->lo = level;
    if (level > s->hi) s->hi = level;
}

static inline void flip_slots(Net *s, int32_t id) {
    for (int32_t i = s->slot_off[id]; i < s->slot_off[id + 1]; i++) {
        int32_t k = s->slot[i];
        s->out_bits[k >> 6] ^= (uint64_t)1 << (k & 63);
    }
}

static inline uint8_t counted(const Node *n) { return n->op == OP_OR ? n->count > 0 : n->count == 0; }

/* Node ``id`` changed value: update its parents' counts and queue those that change. */
static inline void changed(Net *s, int32_t id) {
    flip_slots(s, id);
    Node *nodes = s->node;
    int32_t up = nodes[id].val ? 1 : -1; /* the change in "true children" */
    int32_t own = nodes[id].cyclic ? s->scc[id] : -1;
    const int32_t *parent = s->parent;
    for (int32_t i = s->parent_off[id], end = s->parent_off[id + 1]; i < end; i++) {
        int32_t p = parent[i];
        Node *n = &nodes[p];
        if (n->cyclic) {
            int32_t c = s->scc[p];
            if (c != own) enqueue(s, s->scc_nodes[s->scc_off[c]]); /* a component is queued by its first member */
            continue;
        }
        n->count += n->op == OP_AND ? -up : up;
        /* Queue only a node whose value would change: if later counts bring it back, the
           value it gets when processed (after all its children) is the same. */
        if (counted(n) != n->val) enqueue(s, p);
    }
}

static inline uint8_t direct_value(const Net *s, int32_t id) {
    const Node *nodes = s->node;
    int32_t a = s->child_off[id], b = s->child_off[id + 1];
    switch (nodes[id].op) {
    case OP_AND:
        for (int32_t i = a; i < b; i++)
            if (!nodes[s->child[i]].val) return 0;
        return 1;
    case OP_OR:
        for (int32_t i = a; i < b; i++)
            if (nodes[s->child[i]].val) return 1;
        return 0;
    case OP_NOT:
        return (uint8_t)!nodes[s->child[a]].val;
    case OP_LOOP:
        return nodes[s->child[a]].val;
    case OP_TRUE:
        return 1;
    default:
        return nodes[id].val; /* FALSE, BASE, INPUT: set from outside */
    }
}

/* Least fixpoint of cyclic component c from all-false; report members that changed. */
static void solve_component(Net *s, int32_t c, int report) {
    int32_t a = s->scc_off[c], b = s->scc_off[c + 1];
    Node *nodes = s->node;
    for (int32_t i = a; i < b; i++) {
        s->scc_old[i - a] = nodes[s->scc_nodes[i]].val;
        nodes[s->scc_nodes[i]].val = 0;
    }
    int again = 1;
    while (again) {
        again = 0;
        for (int32_t i = a; i < b; i++) {
            int32_t id = s->scc_nodes[i];
            uint8_t v = direct_value(s, id);
            if (v != nodes[id].val) {
                nodes[id].val = v;
                again = 1;
            }
        }
    }
    if (!report) return;
    for (int32_t i = a; i < b; i++) {
        int32_t id = s->scc_nodes[i];
        if (nodes[id].val != s->scc_old[i - a]) changed(s, id);
    }
}

static void propagate(Net *s) {
    Node *nodes = s->node;
    for (int32_t level = s->lo; level <= s->hi; level++) {
        int32_t id = s->bucket[level];
        s->bucket[level] = -1;
        while (id >= 0) {
            Node *n = &nodes[id];
            int32_t next = n->link;
            n->queued = 0;
            if (n->cyclic) {
                solve_component(s, s->scc[id], 1);
            } else {
                uint8_t v = counted(n);
                if (v != n->val) {
                    n->val = v;
                    changed(s, id);
                }
            }
            id = next;
        }
    }
    s->lo = INT32_MAX;
    s->hi = -1;
}

/* Every node from scratch, base and inputs all false. */
static void full_evaluation(Net *s) {
    Node *nodes = s->node;
    memset(s->out_bits, 0, (size_t)s->slot_words * 8);
    for (int32_t id = 0; id < s->n_nodes; id++) nodes[id].val = 0;
    for (int32_t i = 0; i < s->n_nodes; i++) {
        int32_t id = s->order[i];
        if (nodes[id].cyclic) {
            int32_t c = s->scc[id];
            if (s->scc_nodes[s->scc_off[c]] == id) solve_component(s, c, 0);
        } else {
            nodes[id].val = direct_value(s, id);
        }
    }
    for (int32_t id = 0; id < s->n_nodes; id++) {
        if (!nodes[id].cyclic) {
            int32_t kids = s->child_off[id + 1] - s->child_off[id], truths = 0;
            for (int32_t i = s->child_off[id]; i < s->child_off[id + 1]; i++) truths += nodes[s->child[i]].val;
            nodes[id].count = nodes[id].op == OP_AND ? kids - truths : truths;
        }
        if (nodes[id].val) flip_slots(s, id);
    }
    memset(s->cur_base, 0, (size_t)s->base_words * 8);
    memset(s->cur_input, 0, (size_t)s->input_words * 8);
}

static inline void flip_leaf(Net *s, int32_t id) {
    if (id < 0) return;
    s->node[id].val ^= 1;
    changed(s, id);
}

static int load_state(Net *s, PyObject *key) {
    if (key == s->last_key) return 0; /* the same int object: ints are immutable */
    uint64_t *want = s->scratch_base;
    if (int_to_words(key, want, s->base_words) < 0) return -1;
    uint64_t *cur = s->cur_base;
    int any = 0;
    for (int32_t w = 0; w < s->base_words; w++) {
        uint64_t diff = want[w] ^ cur[w];
        if (!diff) continue;
        any = 1;
        cur[w] = want[w];
        while (diff) {
            int32_t k = w * 64 + __builtin_ctzll(diff);
            diff &= diff - 1;
            if (k < s->n_base) flip_leaf(s, s->base_node[k]);
        }
    }
    if (any) propagate(s);
    Py_INCREF(key);
    Py_XSETREF(s->last_key, key);
    return 0;
}

/* Set the inputs to one move per role (indices into each role's moves), checking legality. */
static int load_moves(Net *s, const int32_t *moves) {
    uint64_t *want = s->scratch_input;
    memset(want, 0, (size_t)s->input_words * 8);
    for (int32_t r = 0; r < s->n_roles; r++) {
        int32_t i = moves[r];
        int32_t count = s->move_off[r + 1] - s->move_off[r];
        if (i < 0 || i >= count || !get_bit(s->out_bits, s->legal_slot0[r] + i)) {
            PyObject *args = Py_BuildValue("(i)", (int)r);
            if (args) {
                PyErr_SetObject(IllegalMove, args);
                Py_DECREF(args);
            }
            return -1;
        }
        int32_t j = s->move_input[s->move_off[r] + i];
        want[j >> 6] |= (uint64_t)1 << (j & 63);
    }
    uint64_t *cur = s->cur_input;
    int any = 0;
    for (int32_t w = 0; w < s->input_words; w++) {
        uint64_t diff = want[w] ^ cur[w];
        if (!diff) continue;
        any = 1;
        cur[w] = want[w];
        while (diff) {
            int32_t j = w * 64 + __builtin_ctzll(diff);
            diff &= diff - 1;
            flip_leaf(s, s->input_node[j]);
        }
    }
    if (any) propagate(s);
    return 0;
}

static int read_moves(Net *s, PyObject *seq, int32_t *moves) {
    PyObject *fast = PySequence_Fast(seq, "moves must be a sequence of ints");
    if (!fast) return -1;
    if (PySequence_Fast_GET_SIZE(fast) != s->n_roles) {
        PyErr_Format(PyExc_ValueError, "expected %d move indices, got %zd", (int)s->n_roles,
                     PySequence_Fast_GET_SIZE(fast));
        Py_DECREF(fast);
        return -1;
    }
    for (int32_t r = 0; r < s->n_roles; r++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, r));
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
        moves[r] = (int32_t)v;
    }
    Py_DECREF(fast);
    return 0;
}

static PyObject *legal_tuple(Net *s, int32_t r) {
    int32_t count = s->move_off[r + 1] - s->move_off[r];
    int32_t first = s->legal_slot0[r];
    int32_t words = (count + 63) / 64;
    const uint64_t *bits = s->out_bits + first / 64;
    Py_ssize_t n = 0;
    for (int32_t w = 0; w < words; w++) n += __builtin_popcountll(bits[w]);
    PyObject *all = PyTuple_GET_ITEM(s->moves, r);
    PyObject *result = PyTuple_New(n);
    if (!result) return NULL;
    Py_ssize_t at = 0;
    for (int32_t w = 0; w < words; w++) {
        uint64_t x = bits[w];
        while (x) {
            int32_t i = w * 64 + __builtin_ctzll(x);
            x &= x - 1;
            PyObject *move = PyTuple_GET_ITEM(all, i);
            Py_INCREF(move);
            PyTuple_SET_ITEM(result, at++, move);
        }
    }
    return result;
}

static PyObject *role_mask(Net *s, int32_t first, int32_t count) {
    int32_t words = (count + 63) / 64;
    if (words == 0) return PyLong_FromLong(0);
    return words_to_int(s->out_bits + first / 64, words);
}

static int check_role(Net *s, int r) {
    if (r < 0 || r >= s->n_roles) {
        PyErr_Format(PyExc_IndexError, "role index %d out of range", r);
        return -1;
    }
    return 0;
}

/* --------------------------------------------------------------- Python methods: single */

static PyObject *Net_legal(Net *s, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "legal(key, role)");
        return NULL;
    }
    int r = (int)PyLong_AsLong(args[1]);
    if ((r == -1 && PyErr_Occurred()) || check_role(s, r) < 0) return NULL;
    if (load_state(s, args[0]) < 0) return NULL;
    return legal_tuple(s, r);
}

static PyObject *Net_legal_mask(Net *s, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "legal_mask(key, role)");
        return NULL;
    }
    int r = (int)PyLong_AsLong(args[1]);
    if ((r == -1 && PyErr_Occurred()) || check_role(s, r) < 0) return NULL;
    if (load_state(s, args[0]) < 0) return NULL;
    return role_mask(s, s->legal_slot0[r], s->move_off[r + 1] - s->move_off[r]);
}

static PyObject *Net_next(Net *s, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "next(key, moves)");
        return NULL;
    }
    int32_t moves[s->n_roles > 0 ? s->n_roles : 1];
    if (read_moves(s, args[1], moves) < 0) return NULL;
    if (load_state(s, args[0]) < 0) return NULL;
    if (load_moves(s, moves) < 0) return NULL;
    return words_to_int(s->out_bits, s->base_words);
}

/* step(key, joint, owner) -> State: the successor under ``joint`` (one move term per role). */
static PyObject *Net_step(Net *s, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "step(key, joint, owner)");
        return NULL;
    }
    PyObject *fast = PySequence_Fast(args[1], "a joint move must be a sequence");
    if (!fast) return NULL;
    int32_t moves[s->n_roles > 0 ? s->n_roles : 1];
    if (PySequence_Fast_GET_SIZE(fast) != s->n_roles) {
        PyErr_Format(PyExc_ValueError, "a joint move needs %d moves (one per role), got %zd",
                     (int)s->n_roles, PySequence_Fast_GET_SIZE(fast));
        Py_DECREF(fast);
        return NULL;
    }
    for (int32_t r = 0; r < s->n_roles; r++) {
        PyObject *found = PyDict_GetItemWithError(PyTuple_GET_ITEM(s->move_index, r),
                                                  PySequence_Fast_GET_ITEM(fast, r));
        if (!found) {
            Py_DECREF(fast);
            if (PyErr_Occurred()) {
                if (!PyErr_ExceptionMatches(PyExc_TypeError)) return NULL;
                PyErr_Clear(); /* an unhashable move: illegal */
            }
            PyObject *e = Py_BuildValue("(i)", (int)r);
            if (e) {
                PyErr_SetObject(IllegalMove, e);
                Py_DECREF(e);
            }
            return NULL;
        }
        moves[r] = (int32_t)PyLong_AsLong(found);
    }
    Py_DECREF(fast);
    if (load_state(s, args[0]) < 0 || load_moves(s, moves) < 0) return NULL;
    return new_state(words_to_int(s->out_bits, s->base_words), args[2]);
}

static PyObject *Net_sees(Net *s, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "sees(key, moves, role)");
        return NULL;
    }
    int r = (int)PyLong_AsLong(args[2]);
    if ((r == -1 && PyErr_Occurred()) || check_role(s, r) < 0) return NULL;
    int32_t moves[s->n_roles > 0 ? s->n_roles : 1];
    if (read_moves(s, args[1], moves) < 0) return NULL;
    if (load_state(s, args[0]) < 0) return NULL;
    if (load_moves(s, moves) < 0) return NULL;
    return role_mask(s, s->sees_slot0[r], s->sees_off[r + 1] - s->sees_off[r]);
}

static PyObject *Net_terminal(Net *s, PyObject *key) {
    if (load_state(s, key) < 0) return NULL;
    return PyBool_FromLong(s->node[s->terminal].val);
}

static PyObject *goals_tuple(Net *s) {
    PyObject *result = PyTuple_New(s->n_roles);
    if (!result) return NULL;
    for (int32_t r = 0; r < s->n_roles; r++) {
        long value = 0;
        for (int32_t i = s->goal_off[r]; i < s->goal_off[r + 1]; i++) {
            if (s->node[s->goal_node[i]].val) {
                value = s->goal_value[i];
                break;
            }
        }
        PyObject *v = PyLong_FromLong(value);
        if (!v) {
            Py_DECREF(result);
            return NULL;
        }
        PyTuple_SET_ITEM(result, r, v);
    }
    return result;
}

static PyObject *Net_goals(Net *s, PyObject *key) {
    if (load_state(s, key) < 0) return NULL;
    return goals_tuple(s);
}

/* children(key[, owner]) -> (legal moves per role, [successor keys, or States of owner,
   in product order]) */
static PyObject *Net_children(Net *s, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "children(key[, owner])");
        return NULL;
    }
    PyObject *key = args[0], *owner = nargs == 2 ? args[1] : NULL;
    if (load_state(s, key) < 0) return NULL;
    int32_t R = s->n_roles;
    PyObject *legal = PyTuple_New(R);
    if (!legal) return NULL;
    int32_t sizes[R > 0 ? R : 1];
    int32_t digit[R > 0 ? R : 1];
    int32_t moves[R > 0 ? R : 1];
    /* the legal move indices of each role, flattened */
    int32_t total = 0;
    for (int32_t r = 0; r < R; r++) total += s->move_off[r + 1] - s->move_off[r];
    int32_t *index = (int32_t *)PyMem_Malloc(sizeof(int32_t) * (total ? total : 1));
    int32_t start[R > 0 ? R : 1];
    if (!index) {
        Py_DECREF(legal);
        return PyErr_NoMemory();
    }
    Py_ssize_t product = 1;
    int32_t at = 0;
    for (int32_t r = 0; r < R; r++) {
        PyObject *t = legal_tuple(s, r);
        if (!t) {
            PyMem_Free(index);
            Py_DECREF(legal);
            return NULL;
        }
        PyTuple_SET_ITEM(legal, r, t);
        start[r] = at;
        int32_t count = s->move_off[r + 1] - s->move_off[r];
        const uint64_t *bits = s->out_bits + s->legal_slot0[r] / 64;
        for (int32_t i = 0; i < count; i++)
            if ((bits[i >> 6] >> (i & 63)) & 1) index[at++] = i;
        sizes[r] = at - start[r];
        product *= sizes[r];
        digit[r] = 0;
    }
    if (R == 0) product = 0;
    PyObject *keys = PyList_New(product);
    if (!keys) {
        PyMem_Free(index);
        Py_DECREF(legal);
        return NULL;
    }
    for (Py_ssize_t j = 0; j < product; j++) {
        for (int32_t r = 0; r < R; r++) moves[r] = index[start[r] + digit[r]];
        if (load_moves(s, moves) < 0) goto fail;
        PyObject *child = words_to_int(s->out_bits, s->base_words);
        if (child && owner) child = new_state(child, owner);
        if (!child) goto fail;
        PyList_SET_ITEM(keys, j, child);
        for (int32_t r = R - 1; r >= 0; r--) { /* the last role varies fastest */
            if (++digit[r] < sizes[r]) break;
            digit[r] = 0;
        }
    }
    PyMem_Free(index);
    PyObject *result = PyTuple_Pack(2, legal, keys);
    Py_DECREF(legal);
    Py_DECREF(keys);
    return result;
fail:
    PyMem_Free(index);
    Py_DECREF(legal);
    Py_DECREF(keys);
    return NULL;
}

static PyObject *Net_zobrist(Net *s, PyObject *key) {
    uint64_t *words = s->scratch_base;
    if (int_to_words(key, words, s->base_words) < 0) return NULL;
    uint64_t h = 0;
    for (int32_t w = 0; w < s->base_words; w++) {
        uint64_t x = words[w];
        while (x) {
            int32_t k = w * 64 + __builtin_ctzll(x);
            x &= x - 1;
            if (k < s->n_base) h ^= s->zobrist[k];
        }
    }
    return PyLong_FromUnsignedLongLong(h);
}

/* --------------------------------------------------------------- bit-sliced batches */

/* Seconds on CLOCK_MONOTONIC, the clock of Python's time.monotonic() on Linux. */
static double monotonic_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* xoshiro256** */
typedef struct { uint64_t s[4]; } Rng;
static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
static inline uint64_t rng_next(Rng *g) {
    uint64_t *s = g->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t; s[3] = rotl(s[3], 45);
    return result;
}
static void rng_seed(Rng *g, uint64_t seed) {
    for (int i = 0; i < 4; i++) { /* splitmix64 */
        uint64_t z = (seed += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        g->s[i] = z ^ (z >> 31);
    }
}
static inline uint32_t rng_below(Rng *g, uint32_t n) { return (uint32_t)(((rng_next(g) >> 32) * (uint64_t)n) >> 32); }

/* A cyclic component over W-word lanes: iterate its members from all-false to the fixpoint. */
static void solve_component_vec(const Net *s, uint64_t *V, int32_t c, int32_t W) {
    int32_t ca = s->scc_off[c], cb = s->scc_off[c + 1];
    for (int32_t i = ca; i < cb; i++) memset(V + (size_t)s->scc_nodes[i] * W, 0, (size_t)W * 8);
    uint64_t tmp[64];
    int again = 1;
    while (again) {
        again = 0;
        for (int32_t i = ca; i < cb; i++) {
            int32_t m = s->scc_nodes[i];
            uint64_t *o = V + (size_t)m * W;
            int32_t ma = s->child_off[m], mb = s->child_off[m + 1];
            switch (s->op[m]) {
            case OP_AND:
                for (int32_t w = 0; w < W; w++) tmp[w] = ~(uint64_t)0;
                for (int32_t k = ma; k < mb; k++) {
                    const uint64_t *x = V + (size_t)s->child[k] * W;
                    for (int32_t w = 0; w < W; w++) tmp[w] &= x[w];
                }
                break;
            case OP_OR:
                for (int32_t w = 0; w < W; w++) tmp[w] = 0;
                for (int32_t k = ma; k < mb; k++) {
                    const uint64_t *x = V + (size_t)s->child[k] * W;
                    for (int32_t w = 0; w < W; w++) tmp[w] |= x[w];
                }
                break;
            case OP_NOT: {
                const uint64_t *x = V + (size_t)s->child[ma] * W;
                for (int32_t w = 0; w < W; w++) tmp[w] = ~x[w];
                break;
            }
            default: { /* LOOP */
                const uint64_t *x = V + (size_t)s->child[ma] * W;
                for (int32_t w = 0; w < W; w++) tmp[w] = x[w];
            }
            }
            for (int32_t w = 0; w < W; w++) {
                if (tmp[w] != o[w]) {
                    o[w] = tmp[w];
                    again = 1;
                }
            }
        }
    }
}

/* Run a program over W-word lanes in V ([n_nodes][W]). */
static inline __attribute__((always_inline)) void eval_vec_w(const Net *s, uint64_t *V, const Program *p,
                                                             const int32_t W) {
    const int32_t *code = p->code, *end = p->code + p->len;
    while (code < end) {
        int32_t head = *code++;
        int32_t op = head & 0xff, kids = head >> 8;
        if (op == OP_COMPONENT) {
            solve_component_vec(s, V, kids, W);
            continue;
        }
        uint64_t *out = V + (size_t)(*code++) * W;
        const uint64_t *x = V + (size_t)code[0] * W;
        if (op == OP_AND) {
            const uint64_t *y = V + (size_t)code[1] * W;
            for (int32_t w = 0; w < W; w++) out[w] = x[w] & y[w];
            for (int32_t k = 2; k < kids; k++) {
                x = V + (size_t)code[k] * W;
                for (int32_t w = 0; w < W; w++) out[w] &= x[w];
            }
        } else if (op == OP_OR) {
            const uint64_t *y = V + (size_t)code[1] * W;
            for (int32_t w = 0; w < W; w++) out[w] = x[w] | y[w];
            for (int32_t k = 2; k < kids; k++) {
                x = V + (size_t)code[k] * W;
                for (int32_t w = 0; w < W; w++) out[w] |= x[w];
            }
        } else if (op == OP_NOT) {
            for (int32_t w = 0; w < W; w++) out[w] = ~x[w];
        } else { /* LOOP (outside a component: cannot happen) */
            for (int32_t w = 0; w < W; w++) out[w] = x[w];
        }
        code += kids;
    }
}

/* eval_vec_w specialised for the lane widths in use (constant W: unrolled, vectorised). */
__attribute__((target_clones("avx2", "default"))) static void eval_vec_8(const Net *s, uint64_t *V,
                                                                           const Program *p) {
    eval_vec_w(s, V, p, 8);
}
__attribute__((target_clones("avx2", "default"))) static void eval_vec_16(const Net *s, uint64_t *V,
                                                                            const Program *p) {
    eval_vec_w(s, V, p, 16);
}
__attribute__((target_clones("avx2", "default"))) static void eval_vec_32(const Net *s, uint64_t *V,
                                                                            const Program *p) {
    eval_vec_w(s, V, p, 32);
}
static void eval_vec(const Net *s, uint64_t *V, const Program *p, int32_t W) {
    if (W == 8) eval_vec_8(s, V, p);
    else if (W == 16) eval_vec_16(s, V, p);
    else if (W == 32) eval_vec_32(s, V, p);
    else eval_vec_w(s, V, p, W);
}

/* The program of ``nodes`` (level order; a component's members together). */
static int make_program(const Net *s, const int32_t *nodes, Py_ssize_t n, Program *p) {
    Py_ssize_t len = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t id = nodes[i];
        if (id < 0 || id >= s->n_nodes) {
            PyErr_Format(PyExc_ValueError, "program: node %d out of range", (int)id);
            return -1;
        }
        if (s->scc[id] >= 0) len += 1;
        else if (s->op[id] >= OP_AND) len += 2 + s->child_off[id + 1] - s->child_off[id];
    }
    p->code = (int32_t *)PyMem_Malloc(sizeof(int32_t) * (len ? len : 1));
    if (!p->code) {
        PyErr_NoMemory();
        return -1;
    }
    int32_t at = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t id = nodes[i];
        int32_t c = s->scc[id];
        if (c >= 0) {
            if (s->scc_nodes[s->scc_off[c]] == id) p->code[at++] = OP_COMPONENT | (c << 8);
            continue;
        }
        if (s->op[id] < OP_AND) continue; /* constants and leaves */
        int32_t a = s->child_off[id], b = s->child_off[id + 1];
        if (s->op[id] != OP_NOT && s->op[id] != OP_LOOP && b - a < 2) {
            PyErr_Format(PyExc_ValueError, "program: gate %d has %d children", (int)id, (int)(b - a));
            return -1;
        }
        p->code[at++] = s->op[id] | ((b - a) << 8);
        p->code[at++] = id;
        for (int32_t k = a; k < b; k++) p->code[at++] = s->child[k];
    }
    p->len = at;
    return 0;
}

static inline void lane_set(uint64_t *vec, int32_t lane) { vec[lane >> 6] |= (uint64_t)1 << (lane & 63); }
static inline void lane_clear(uint64_t *vec, int32_t lane) { vec[lane >> 6] &= ~((uint64_t)1 << (lane & 63)); }
static inline int lane_get(const uint64_t *vec, int32_t lane) { return (int)((vec[lane >> 6] >> (lane & 63)) & 1); }

/* Clear the lanes of ``mask`` in every base vector. */
static void clear_lanes(const Net *s, uint64_t *V, int32_t W, const uint64_t *mask) {
    for (int32_t k = 0; k < s->n_base; k++) {
        int32_t id = s->base_node[k];
        if (id < 0) continue;
        uint64_t *vec = V + (size_t)id * W;
        for (int32_t w = 0; w < W; w++) vec[w] &= ~mask[w];
    }
}

/* Set, in each lane of ``mask``, the true bits of the state in row lane_playout[lane] of
   ``rows`` ([N][base_words]); those lanes of the base vectors must be clear (advance
   clears them). */
static void load_lanes(const Net *s, uint64_t *V, int32_t W, const uint64_t *mask, const uint64_t *rows,
                       const int64_t *lane_playout) {
    for (int32_t w = 0; w < W; w++) {
        uint64_t x = mask[w];
        while (x) {
            int32_t lane = w * 64 + __builtin_ctzll(x);
            x &= x - 1;
            const uint64_t *row = rows + (size_t)lane_playout[lane] * s->base_words;
            for (int32_t bw = 0; bw < s->base_words; bw++) {
                uint64_t y = row[bw];
                while (y) {
                    int32_t k = bw * 64 + __builtin_ctzll(y);
                    y &= y - 1;
                    if (k < s->n_base && s->base_node[k] >= 0) lane_set(V + (size_t)s->base_node[k] * W, lane);
                }
            }
        }
    }
}

static uint64_t *new_vectors(const Net *s, int32_t W) {
    uint64_t *V = (uint64_t *)PyMem_Calloc((size_t)s->n_nodes * W, 8);
    if (!V) return (uint64_t *)PyErr_NoMemory();
    for (int32_t w = 0; w < W; w++) V[(size_t)1 * W + w] = ~(uint64_t)0; /* node 1 is TRUE */
    return V;
}

static int get_writable(PyObject *obj, Py_buffer *view, Py_ssize_t nbytes, const char *what) {
    if (PyObject_GetBuffer(obj, view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) return -1;
    if (view->len != nbytes) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd bytes, got %zd", what, nbytes, view->len);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static int get_readable(PyObject *obj, Py_buffer *view, Py_ssize_t nbytes, const char *what) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS) < 0) return -1;
    if (view->len != nbytes) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd bytes, got %zd", what, nbytes, view->len);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/*
 * Pick one legal move per role, uniformly, in each lane of ``active``; set the inputs of
 * the picks. Where most of a role's moves are legal (``density``, the fraction of its
 * moves legal on average, as last seen), rejection: a random move of the role, kept if
 * legal. Otherwise, and for lanes where a few rejection tries fail: count each lane's
 * legal moves and take a uniformly random one of them. ``density`` is updated per role.
 */
#define REJECTION_TRIES 4
static void choose_moves(const Net *s, uint64_t *V, int32_t W, const uint64_t *active, Rng *g,
                         int32_t *count, double *density) {
    uint64_t open[64];
    for (int32_t j = 0; j < s->n_inputs; j++) {
        int32_t node = s->input_node[j];
        if (node >= 0) memset(V + (size_t)node * W, 0, (size_t)W * 8);
    }
    for (int32_t r = 0; r < s->n_roles; r++) {
        int32_t a = s->move_off[r], b = s->move_off[r + 1];
        uint32_t m = (uint32_t)(b - a);
        if (m == 0) continue;
        /* Lanes where the role has exactly one legal move (a turn-taking game's other
           roles): take it, bit-parallel. */
        uint64_t one[64], two[64];
        for (int32_t w = 0; w < W; w++) one[w] = two[w] = 0;
        for (int32_t mv = a; mv < b; mv++) {
            const uint64_t *legal = V + (size_t)s->legal_node[mv] * W;
            for (int32_t w = 0; w < W; w++) {
                two[w] |= one[w] & legal[w];
                one[w] |= legal[w];
            }
        }
        int single_any = 0;
        for (int32_t w = 0; w < W; w++) {
            one[w] &= ~two[w] & active[w];
            single_any |= one[w] != 0;
        }
        if (single_any) {
            for (int32_t mv = a; mv < b; mv++) {
                const uint64_t *legal = V + (size_t)s->legal_node[mv] * W;
                int32_t node = s->input_node[s->move_input[mv]];
                if (node < 0) continue;
                uint64_t *in = V + (size_t)node * W;
                for (int32_t w = 0; w < W; w++) in[w] |= legal[w] & one[w];
            }
        }
        int any = 0;
        int rejection = density[r] >= 0.3;
        int64_t tries = 0, hits = 0, lanes = 0, pairs = 0;
        for (int32_t w = 0; w < W; w++) {
            open[w] = active[w] & two[w]; /* lanes with no legal move get no input */
            if (!rejection) {
                any |= open[w] != 0;
                continue;
            }
            uint64_t x = open[w];
            while (x) {
                int32_t lane = w * 64 + __builtin_ctzll(x);
                x &= x - 1;
                for (int t = 0; t < REJECTION_TRIES; t++) {
                    int32_t pick = a + (int32_t)rng_below(g, m);
                    tries++;
                    if (lane_get(V + (size_t)s->legal_node[pick] * W, lane)) {
                        hits++;
                        int32_t node = s->input_node[s->move_input[pick]];
                        if (node >= 0) lane_set(V + (size_t)node * W, lane);
                        open[w] &= ~((uint64_t)1 << (lane & 63));
                        break;
                    }
                }
            }
            any |= open[w] != 0;
        }
        if (rejection && tries) density[r] = (double)hits / (double)tries;
        if (!any) continue;
        for (int32_t w = 0; w < W; w++) {
            uint64_t x = open[w];
            while (x) {
                count[w * 64 + __builtin_ctzll(x)] = 0;
                x &= x - 1;
                lanes++;
            }
        }
        for (int32_t mv = a; mv < b; mv++) {
            const uint64_t *legal = V + (size_t)s->legal_node[mv] * W;
            for (int32_t w = 0; w < W; w++) {
                uint64_t x = legal[w] & open[w];
                while (x) {
                    count[w * 64 + __builtin_ctzll(x)]++;
                    x &= x - 1;
                    pairs++;
                }
            }
        }
        if (!rejection && lanes) density[r] = (double)pairs / ((double)lanes * m);
        for (int32_t w = 0; w < W; w++) {
            uint64_t x = open[w];
            while (x) {
                int32_t lane = w * 64 + __builtin_ctzll(x);
                x &= x - 1;
                if (count[lane] > 0) count[lane] = (int32_t)rng_below(g, (uint32_t)count[lane]) + 1;
                else open[w] &= ~((uint64_t)1 << (lane & 63)); /* no legal move: no input */
            }
        }
        for (int32_t mv = a; mv < b; mv++) {
            const uint64_t *legal = V + (size_t)s->legal_node[mv] * W;
            int32_t node = s->input_node[s->move_input[mv]];
            for (int32_t w = 0; w < W; w++) {
                uint64_t x = legal[w] & open[w];
                while (x) {
                    int32_t lane = w * 64 + __builtin_ctzll(x);
                    x &= x - 1;
                    if (--count[lane] == 0 && node >= 0) lane_set(V + (size_t)node * W, lane);
                }
            }
        }
    }
}

/*
 * How the next-state vectors become the base vectors: (dst, src) node pairs, those whose
 * source is itself a base node last (``n_direct`` pairs first): their sources are saved
 * before any base vector is overwritten.
 */
typedef struct {
    int32_t *dst, *src;
    int32_t n_direct, n;
} Advance;

static int make_advance(const Net *s, Advance *a) {
    a->dst = (int32_t *)PyMem_Malloc(sizeof(int32_t) * (s->n_base ? s->n_base : 1));
    a->src = (int32_t *)PyMem_Malloc(sizeof(int32_t) * (s->n_base ? s->n_base : 1));
    if (!a->dst || !a->src) return -1;
    a->n = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int32_t k = 0; k < s->n_base; k++) {
            if (s->base_node[k] < 0 || (s->op[s->next_node[k]] == OP_BASE) != pass) continue;
            a->dst[a->n] = s->base_node[k];
            a->src[a->n++] = s->next_node[k];
        }
        if (pass == 0) a->n_direct = a->n;
    }
    return 0;
}

/* Every base vector takes its next-state vector, with the lanes of ``clear`` zeroed. */
static inline __attribute__((always_inline)) void advance_w(const Advance *a, uint64_t *V, const int32_t W,
                                                            uint64_t *scratch, const uint64_t *clear) {
    uint64_t keep[64];
    for (int32_t w = 0; w < W; w++) keep[w] = ~clear[w];
    for (int32_t i = a->n_direct; i < a->n; i++) {
        const uint64_t *x = V + (size_t)a->src[i] * W;
        uint64_t *t = scratch + (size_t)(i - a->n_direct) * W;
        for (int32_t w = 0; w < W; w++) t[w] = x[w];
    }
    for (int32_t i = 0; i < a->n_direct; i++) {
        const uint64_t *x = V + (size_t)a->src[i] * W;
        uint64_t *o = V + (size_t)a->dst[i] * W;
        for (int32_t w = 0; w < W; w++) o[w] = x[w] & keep[w];
    }
    for (int32_t i = a->n_direct; i < a->n; i++) {
        const uint64_t *t = scratch + (size_t)(i - a->n_direct) * W;
        uint64_t *o = V + (size_t)a->dst[i] * W;
        for (int32_t w = 0; w < W; w++) o[w] = t[w] & keep[w];
    }
}

#define ADVANCE_AT(N)                                                                                      \
    __attribute__((target_clones("avx2", "default"))) static void advance_##N(                               \
        const Advance *a, uint64_t *V, uint64_t *scratch, const uint64_t *clear) {                          \
        advance_w(a, V, N, scratch, clear);                                                                  \
    }
ADVANCE_AT(8)
ADVANCE_AT(16)
ADVANCE_AT(32)

static void advance(const Advance *a, uint64_t *V, int32_t W, uint64_t *scratch, const uint64_t *clear) {
    if (W == 8) advance_8(a, V, scratch, clear);
    else if (W == 16) advance_16(a, V, scratch, clear);
    else if (W == 32) advance_32(a, V, scratch, clear);
    else advance_w(a, V, W, scratch, clear);
}

/*
 * playouts(starts, n, seed, max_steps, goals, lengths, finished, lanes_words[, deadline])
 *   starts: bytes-like [n][base_words] uint64 (one start state per playout)
 *   goals: writable int64 [n][roles]; lengths: int64 [n]; finished: uint8 [n]
 *   deadline: a CLOCK_MONOTONIC time in seconds (Python's time.monotonic() on Linux),
 *   negative for none: at it every playout still running or pending stops unfinished
 */
static PyObject *Net_playouts(Net *s, PyObject *args) {
    PyObject *starts_obj, *goals_obj, *lengths_obj, *finished_obj;
    Py_ssize_t n;
    unsigned long long seed;
    long long max_steps;
    int W;
    double deadline = -1.0;
    if (!PyArg_ParseTuple(args, "OnKLOOOi|d", &starts_obj, &n, &seed, &max_steps, &goals_obj, &lengths_obj,
                          &finished_obj, &W, &deadline))
        return NULL;
    if (W < 1 || W > 64) {
        PyErr_SetString(PyExc_ValueError, "lane words must be in 1..64");
        return NULL;
    }
    Py_buffer starts, goals, lengths, finished;
    if (get_readable(starts_obj, &starts, n * s->base_words * 8, "starts") < 0) return NULL;
    if (get_writable(goals_obj, &goals, n * s->n_roles * 8, "goals") < 0) {
        PyBuffer_Release(&starts);
        return NULL;
    }
    if (get_writable(lengths_obj, &lengths, n * 8, "lengths") < 0) {
        PyBuffer_Release(&starts);
        PyBuffer_Release(&goals);
        return NULL;
    }
    if (get_writable(finished_obj, &finished, n, "finished") < 0) {
        PyBuffer_Release(&starts);
        PyBuffer_Release(&goals);
        PyBuffer_Release(&lengths);
        return NULL;
    }
    int32_t lanes = W * 64;
    uint64_t *V = new_vectors(s, W);
    uint64_t *scratch = (uint64_t *)PyMem_Malloc((size_t)(s->n_base ? s->n_base : 1) * W * 8);
    int32_t *count = (int32_t *)PyMem_Malloc(sizeof(int32_t) * lanes);
    double *density = (double *)PyMem_Malloc(sizeof(double) * (s->n_roles ? s->n_roles : 1));
    int64_t *lane_playout = (int64_t *)PyMem_Malloc(sizeof(int64_t) * lanes);
    int64_t *lane_steps = (int64_t *)PyMem_Malloc(sizeof(int64_t) * lanes);
    uint64_t active[64], done[64], reload[64];
    Advance plan = {NULL, NULL, 0, 0};
    PyObject *result = NULL;
    if (!V || !scratch || !count || !density || !lane_playout || !lane_steps || make_advance(s, &plan) < 0) {
        PyErr_NoMemory();
        goto out;
    }
    const uint64_t *rows = (const uint64_t *)starts.buf;
    int64_t *goal_out = (int64_t *)goals.buf;
    int64_t *length_out = (int64_t *)lengths.buf;
    uint8_t *finished_out = (uint8_t *)finished.buf;
    memset(goal_out, 0, (size_t)n * s->n_roles * 8);
    memset(length_out, 0, (size_t)n * 8);
    memset(finished_out, 0, (size_t)n);
    Rng g;
    rng_seed(&g, seed);
    for (int32_t r = 0; r < s->n_roles; r++) density[r] = 1.0;
    memset(active, 0, sizeof(active));
    Py_ssize_t pending = 0;
    Py_BEGIN_ALLOW_THREADS
    for (int32_t lane = 0; lane < lanes && pending < n; lane++) {
        lane_playout[lane] = pending++;
        lane_steps[lane] = 0;
        lane_set(active, lane);
    }
    load_lanes(s, V, W, active, rows, lane_playout);
    for (;;) {
        int any = 0;
        for (int32_t w = 0; w < W; w++) any |= active[w] != 0;
        if (!any) break;
        if (deadline >= 0.0 && monotonic_seconds() >= deadline) {
            for (int32_t lane = 0; lane < lanes; lane++) /* unfinished: their steps so far */
                if (lane_get(active, lane)) length_out[lane_playout[lane]] = lane_steps[lane];
            break;
        }
        eval_vec(s, V, &s->state_play, W);
        const uint64_t *term = V + (size_t)s->terminal * W;
        for (int32_t w = 0; w < W; w++) {
            uint64_t ended = active[w] & term[w];
            done[w] = ended;
            uint64_t x = active[w] & ~ended;
            while (x) { /* out of steps */
                int32_t lane = w * 64 + __builtin_ctzll(x);
                x &= x - 1;
                if (lane_steps[lane] >= max_steps) done[w] |= (uint64_t)1 << (lane & 63);
            }
        }
        for (int32_t w = 0; w < W; w++) {
            uint64_t x = done[w];
            while (x) {
                int32_t lane = w * 64 + __builtin_ctzll(x);
                x &= x - 1;
                int64_t p = lane_playout[lane];
                length_out[p] = lane_steps[lane];
                if (lane_get(term, lane)) {
                    finished_out[p] = 1;
                    for (int32_t r = 0; r < s->n_roles; r++) {
                        for (int32_t i = s->goal_off[r]; i < s->goal_off[r + 1]; i++) {
                            if (lane_get(V + (size_t)s->goal_node[i] * W, lane)) {
                                goal_out[p * s->n_roles + r] = s->goal_value[i];
                                break;
                            }
                        }
                    }
                }
            }
            active[w] &= ~done[w];
        }
        choose_moves(s, V, W, active, &g, count, density);
        eval_vec(s, V, &s->move_play, W);
        int any_reload = 0;
        for (int32_t w = 0; w < W; w++) {
            uint64_t x = active[w];
            while (x) {
                int32_t lane = w * 64 + __builtin_ctzll(x);
                x &= x - 1;
                lane_steps[lane]++;
            }
            reload[w] = 0;
            x = done[w];
            while (x && pending < n) { /* the lane takes the next pending playout */
                int32_t lane = w * 64 + __builtin_ctzll(x);
                x &= x - 1;
                lane_playout[lane] = pending++;
                lane_steps[lane] = 0;
                reload[w] |= (uint64_t)1 << (lane & 63);
            }
            active[w] |= reload[w];
            any_reload |= reload[w] != 0;
        }
        advance(&plan, V, W, scratch, reload);
        if (any_reload) load_lanes(s, V, W, reload, rows, lane_playout);
    }
    Py_END_ALLOW_THREADS
    Py_INCREF(Py_None);
    result = Py_None;
out:
    PyMem_Free(plan.dst);
    PyMem_Free(plan.src);
    PyMem_Free(V);
    PyMem_Free(scratch);
    PyMem_Free(count);
    PyMem_Free(density);
    PyMem_Free(lane_playout);
    PyMem_Free(lane_steps);
    PyBuffer_Release(&starts);
    PyBuffer_Release(&goals);
    PyBuffer_Release(&lengths);
    PyBuffer_Release(&finished);
    return result;
}

/*
 * evaluate(states, moves_or_None, n, legal, terminal, goals, next, sees)
 *   states: [n][base_words] uint64; moves: int32 [n][roles] or None
 *   legal: uint8 [n][n_moves]; terminal: uint8 [n]; goals: int64 [n][roles];
 *   next: uint64 [n][base_words] (needs moves); sees: uint8 [n][n_percepts] (needs moves)
 *   Any output may be None. Illegal moves are not checked here (the caller checks).
 */
static PyObject *Net_evaluate(Net *s, PyObject *args) {
    PyObject *states_obj, *moves_obj, *outs[5];
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "OOnOOOOO", &states_obj, &moves_obj, &n, &outs[0], &outs[1], &outs[2],
                          &outs[3], &outs[4]))
        return NULL;
    int32_t n_moves = s->move_off[s->n_roles], n_percepts = s->sees_off[s->n_roles];
    Py_ssize_t sizes[5] = {n * n_moves, n, n * s->n_roles * 8, n * s->base_words * 8, n * n_percepts};
    const char *names[5] = {"legal", "terminal", "goals", "next", "sees"};
    Py_buffer states, moves, views[5];
    int have[5] = {0, 0, 0, 0, 0}, have_moves = 0;
    PyObject *result = NULL;
    uint64_t *V = NULL;
    if (get_readable(states_obj, &states, n * s->base_words * 8, "states") < 0) return NULL;
    if (moves_obj != Py_None) {
        if (get_readable(moves_obj, &moves, n * s->n_roles * 4, "moves") < 0) goto out;
        have_moves = 1;
    }
    for (int i = 0; i < 5; i++) {
        if (outs[i] == Py_None) continue;
        if ((i == 3 || i == 4) && !have_moves) {
            PyErr_Format(PyExc_ValueError, "%s needs moves", names[i]);
            goto out;
        }
        if (get_writable(outs[i], &views[i], sizes[i], names[i]) < 0) goto out;
        have[i] = 1;
    }
    const int32_t W = 16, lanes = 64 * 16;
    V = new_vectors(s, W);
    if (!V) goto out;
    const uint64_t *rows = (const uint64_t *)states.buf;
    const int32_t *move_rows = have_moves ? (const int32_t *)moves.buf : NULL;
    for (Py_ssize_t first = 0; first < n; first += lanes) {
        int32_t width = (int32_t)(n - first < lanes ? n - first : lanes);
        uint64_t mask[16];
        int64_t lane_row[16 * 64];
        memset(mask, 0, sizeof(mask));
        for (int32_t lane = 0; lane < width; lane++) {
            lane_set(mask, lane);
            lane_row[lane] = first + lane;
        }
        clear_lanes(s, V, W, mask);
        load_lanes(s, V, W, mask, rows, lane_row);
        eval_vec(s, V, &s->state_all, W);
        for (int32_t lane = 0; lane < width; lane++) {
            Py_ssize_t i = first + lane;
            if (have[0]) {
                uint8_t *row = (uint8_t *)views[0].buf + i * n_moves;
                for (int32_t m = 0; m < n_moves; m++) row[m] = (uint8_t)lane_get(V + (size_t)s->legal_node[m] * W, lane);
            }
            if (have[1]) ((uint8_t *)views[1].buf)[i] = (uint8_t)lane_get(V + (size_t)s->terminal * W, lane);
            if (have[2]) {
                int64_t *row = (int64_t *)views[2].buf + i * s->n_roles;
                for (int32_t r = 0; r < s->n_roles; r++) {
                    row[r] = 0;
                    for (int32_t k = s->goal_off[r]; k < s->goal_off[r + 1]; k++) {
                        if (lane_get(V + (size_t)s->goal_node[k] * W, lane)) {
                            row[r] = s->goal_value[k];
                            break;
                        }
                    }
                }
            }
        }
        if (!have_moves) continue;
        for (int32_t j = 0; j < s->n_inputs; j++)
            if (s->input_node[j] >= 0) memset(V + (size_t)s->input_node[j] * W, 0, (size_t)W * 8);
        for (int32_t lane = 0; lane < width; lane++) {
            const int32_t *mv = move_rows + (first + lane) * s->n_roles;
            for (int32_t r = 0; r < s->n_roles; r++) {
                int32_t count = s->move_off[r + 1] - s->move_off[r];
                if (mv[r] < 0 || mv[r] >= count) continue;
                int32_t node = s->input_node[s->move_input[s->move_off[r] + mv[r]]];
                if (node >= 0) lane_set(V + (size_t)node * W, lane);
            }
        }
        eval_vec(s, V, &s->move_all, W);
        for (int32_t lane = 0; lane < width; lane++) {
            Py_ssize_t i = first + lane;
            if (have[3]) {
                uint64_t *row = (uint64_t *)views[3].buf + i * s->base_words;
                memset(row, 0, (size_t)s->base_words * 8);
                for (int32_t k = 0; k < s->n_base; k++)
                    if (lane_get(V + (size_t)s->next_node[k] * W, lane)) row[k >> 6] |= (uint64_t)1 << (k & 63);
            }
            if (have[4]) {
                uint8_t *row = (uint8_t *)views[4].buf + i * n_percepts;
                for (int32_t p = 0; p < n_percepts; p++) row[p] = (uint8_t)lane_get(V + (size_t)s->sees_node[p] * W, lane);
            }
        }
    }
    Py_INCREF(Py_None);
    result = Py_None;
out:
    PyMem_Free(V);
    PyBuffer_Release(&states);
    if (have_moves) PyBuffer_Release(&moves);
    for (int i = 0; i < 5; i++)
        if (have[i]) PyBuffer_Release(&views[i]);
    return result;
}


/* --------------------------------------------------------------- the Game's fast path */

/*
 * Front: the three queries of a random playout (legal moves, next state, terminal) as
 * Game takes them (State objects, role terms, joint moves as sequences of terms), answered
 * in one C call where the arguments are this machine's own: a State of ``owner``, a role
 * of ``roles`` (a dict role -> index), a tuple or list with one known move per role, all
 * legal. Anything else (a role name, a foreign state, an unknown or illegal move, a
 * mapping) goes to the Python fallbacks, which answer it or raise the usual GameError.
 */
typedef struct {
    PyObject_HEAD
    Net *net;
    PyObject *owner, *roles, *legal_fallback, *next_fallback, *terminal_fallback;
} Front;

static inline PyObject *slot_of(PyObject *state, Py_ssize_t at) { return *(PyObject **)((char *)state + at); }

/* The key of ``state`` when it is a State of this front's owner, else NULL (no error set). */
static inline PyObject *own_key(Front *f, PyObject *state) {
    if (Py_TYPE(state) != StateType || slot_of(state, state_owner_at) != f->owner) return NULL;
    PyObject *key = slot_of(state, state_key_at);
    return key && PyLong_CheckExact(key) ? key : NULL;
}

static PyObject *Front_legal(Front *f, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs == 2) {
        PyObject *key = own_key(f, args[0]);
        if (key) {
            PyObject *found = PyDict_GetItemWithError(f->roles, args[1]);
            if (found) {
                if (load_state(f->net, key) < 0) return NULL;
                return legal_tuple(f->net, (int32_t)PyLong_AsLong(found));
            }
            if (PyErr_Occurred()) PyErr_Clear(); /* an unhashable role: the fallback says why */
        }
    }
    return PyObject_Vectorcall(f->legal_fallback, args, (size_t)nargs, NULL);
}

static PyObject *Front_next(Front *f, PyObject *const *args, Py_ssize_t nargs) {
    Net *s = f->net;
    PyObject *key = nargs == 2 ? own_key(f, args[0]) : NULL;
    PyObject *joint = nargs == 2 ? args[1] : NULL;
    if (key && (PyTuple_CheckExact(joint) || PyList_CheckExact(joint)) && Py_SIZE(joint) == s->n_roles) {
        int is_tuple = PyTuple_CheckExact(joint);
        int32_t moves[s->n_roles > 0 ? s->n_roles : 1];
        int32_t r = 0;
        for (; r < s->n_roles; r++) {
            if (Py_SIZE(joint) != s->n_roles) break; /* a list changed by a move's __eq__ */
            PyObject *item = is_tuple ? PyTuple_GET_ITEM(joint, r) : PyList_GET_ITEM(joint, r);
            Py_INCREF(item);
            PyObject *found = PyDict_GetItemWithError(PyTuple_GET_ITEM(s->move_index, r), item);
            Py_DECREF(item);
            if (!found) {
                if (PyErr_Occurred()) PyErr_Clear();
                break;
            }
            moves[r] = (int32_t)PyLong_AsLong(found);
        }
        if (r == s->n_roles) {
            if (load_state(s, key) < 0) return NULL;
            if (load_moves(s, moves) == 0) return new_state(words_to_int(s->out_bits, s->base_words), f->owner);
            if (!PyErr_ExceptionMatches(IllegalMove)) return NULL;
            PyErr_Clear(); /* the fallback raises the GameError naming the move */
        }
    }
    return PyObject_Vectorcall(f->next_fallback, args, (size_t)nargs, NULL);
}

static PyObject *Front_terminal(Front *f, PyObject *state) {
    PyObject *key = own_key(f, state);
    if (!key) return PyObject_CallOneArg(f->terminal_fallback, state);
    if (load_state(f->net, key) < 0) return NULL;
    return PyBool_FromLong(f->net->node[f->net->terminal].val);
}

static int Front_traverse(Front *f, visitproc visit, void *arg) {
    Py_VISIT(f->net);
    Py_VISIT(f->owner);
    Py_VISIT(f->roles);
    Py_VISIT(f->legal_fallback);
    Py_VISIT(f->next_fallback);
    Py_VISIT(f->terminal_fallback);
    return 0;
}

static int Front_clear(Front *f) {
    Py_CLEAR(f->net);
    Py_CLEAR(f->owner);
    Py_CLEAR(f->roles);
    Py_CLEAR(f->legal_fallback);
    Py_CLEAR(f->next_fallback);
    Py_CLEAR(f->terminal_fallback);
    return 0;
}

static void Front_dealloc(Front *f) {
    PyObject_GC_UnTrack(f);
    Front_clear(f);
    Py_TYPE(f)->tp_free((PyObject *)f);
}

static PyMethodDef Front_methods[] = {
    {"legal_moves", (PyCFunction)(void (*)(void))Front_legal, METH_FASTCALL,
     "legal_moves(state, role) -> tuple of the role's legal moves"},
    {"next_state", (PyCFunction)(void (*)(void))Front_next, METH_FASTCALL,
     "next_state(state, joint) -> the successor State"},
    {"is_terminal", (PyCFunction)Front_terminal, METH_O, "is_terminal(state) -> bool"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject FrontType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ggp_propnet_kernel.Front",
    .tp_basicsize = sizeof(Front),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A playout's three queries answered natively, with Python fallbacks (Net.front).",
    .tp_traverse = (traverseproc)Front_traverse,
    .tp_clear = (inquiry)Front_clear,
    .tp_dealloc = (destructor)Front_dealloc,
    .tp_methods = Front_methods,
};

/* front(owner, roles, legal_fallback, next_fallback, terminal_fallback) -> Front */
static PyObject *Net_front(Net *s, PyObject *args) {
    PyObject *owner, *roles, *legal, *next, *terminal;
    if (!PyArg_ParseTuple(args, "OO!OOO", &owner, &PyDict_Type, &roles, &legal, &next, &terminal)) return NULL;
    if (!StateType) {
        PyErr_SetString(PyExc_RuntimeError, "set_state_class was not called");
        return NULL;
    }
    PyObject *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(roles, &pos, NULL, &value)) {
        long r = PyLong_Check(value) ? PyLong_AsLong(value) : -1;
        if (r < 0 || r >= s->n_roles) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "roles maps each role to its index");
            return NULL;
        }
    }
    Front *f = PyObject_GC_New(Front, &FrontType);
    if (!f) return NULL;
    Py_INCREF(s);
    f->net = s;
    PyObject *refs[5] = {owner, roles, legal, next, terminal};
    for (int i = 0; i < 5; i++) Py_INCREF(refs[i]);
    f->owner = owner;
    f->roles = roles;
    f->legal_fallback = legal;
    f->next_fallback = next;
    f->terminal_fallback = terminal;
    PyObject_GC_Track(f);
    return (PyObject *)f;
}

/* --------------------------------------------------------------- construction */

static void Net_dealloc(Net *s) {
    void *arrays[] = {s->op, s->child_off, s->child, s->parent_off, s->parent, s->level, s->order, s->scc,
                      s->scc_off, s->scc_nodes, s->base_node, s->input_node, s->next_node, s->slot_off,
                      s->slot, s->move_off, s->move_input, s->legal_node, s->legal_slot0, s->sees_off,
                      s->sees_node, s->sees_slot0, s->goal_off, s->goal_value, s->goal_node,
                      s->state_all.code, s->move_all.code, s->state_play.code, s->move_play.code, s->zobrist, s->node, s->cur_base,
                      s->cur_input, s->out_bits, s->scratch_base, s->scratch_input, s->scc_old,
                      s->bucket};
    for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++) PyMem_Free(arrays[i]);
    Py_XDECREF(s->moves);
    Py_XDECREF(s->move_index);
    Py_XDECREF(s->last_key);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

/*
 * Net(spec): spec is a dict of bytes (int32 arrays unless said) and ints:
 *   n_nodes, n_base, n_inputs, n_roles, n_levels, terminal (ints)
 *   ops (uint8 [n_nodes]), child_off, child, parent_off, parent, level, order, scc,
 *   scc_off, scc_nodes, base_node, input_node, next_node, move_off, move_input,
 *   legal_node, sees_off, sees_node, goal_off, goal_value, goal_node, state_all,
 *   move_all, state_play, move_play (node lists of the four programs), zobrist (uint64 [n_base]), moves (tuple of tuples of terms)
 */
static int spec_int(PyObject *spec, const char *key, int32_t *out) {
    PyObject *v = PyDict_GetItemString(spec, key);
    if (!v) {
        PyErr_Format(PyExc_KeyError, "kernel spec misses %s", key);
        return -1;
    }
    long x = PyLong_AsLong(v);
    if (x == -1 && PyErr_Occurred()) return -1;
    *out = (int32_t)x;
    return 0;
}

static int spec_array(PyObject *spec, const char *key, int32_t **out, Py_ssize_t expect) {
    PyObject *v = PyDict_GetItemString(spec, key);
    if (!v) {
        PyErr_Format(PyExc_KeyError, "kernel spec misses %s", key);
        return -1;
    }
    return copy_int32(v, out, expect, key);
}

static int Net_init(Net *s, PyObject *args, PyObject *kwds) {
    PyObject *spec;
    if (!PyArg_ParseTuple(args, "O!", &PyDict_Type, &spec)) return -1;
    if (spec_int(spec, "n_nodes", &s->n_nodes) < 0 || spec_int(spec, "n_base", &s->n_base) < 0 ||
        spec_int(spec, "n_inputs", &s->n_inputs) < 0 || spec_int(spec, "n_roles", &s->n_roles) < 0 ||
        spec_int(spec, "n_levels", &s->n_levels) < 0 || spec_int(spec, "terminal", &s->terminal) < 0 ||
        spec_int(spec, "n_scc", &s->n_scc) < 0)
        return -1;
    int32_t N = s->n_nodes, R = s->n_roles;
    PyObject *ops = PyDict_GetItemString(spec, "ops");
    if (!ops) {
        PyErr_SetString(PyExc_KeyError, "kernel spec misses ops");
        return -1;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(ops, &view, PyBUF_SIMPLE) < 0) return -1;
    if (view.len != N) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "ops: wrong length");
        return -1;
    }
    s->op = (uint8_t *)PyMem_Malloc(N ? N : 1);
    if (!s->op) {
        PyBuffer_Release(&view);
        PyErr_NoMemory();
        return -1;
    }
    memcpy(s->op, view.buf, N);
    PyBuffer_Release(&view);
    if (spec_array(spec, "child_off", &s->child_off, N + 1) < 0 || spec_array(spec, "child", &s->child, -1) < 0 ||
        spec_array(spec, "parent_off", &s->parent_off, N + 1) < 0 ||
        spec_array(spec, "parent", &s->parent, -1) < 0 || spec_array(spec, "level", &s->level, N) < 0 ||
        spec_array(spec, "order", &s->order, N) < 0 || spec_array(spec, "scc", &s->scc, N) < 0 ||
        spec_array(spec, "scc_off", &s->scc_off, s->n_scc + 1) < 0 ||
        spec_array(spec, "scc_nodes", &s->scc_nodes, -1) < 0 ||
        spec_array(spec, "base_node", &s->base_node, s->n_base) < 0 ||
        spec_array(spec, "input_node", &s->input_node, s->n_inputs) < 0 ||
        spec_array(spec, "next_node", &s->next_node, s->n_base) < 0 ||
        spec_array(spec, "move_off", &s->move_off, R + 1) < 0 ||
        spec_array(spec, "move_input", &s->move_input, -1) < 0 ||
        spec_array(spec, "legal_node", &s->legal_node, -1) < 0 ||
        spec_array(spec, "sees_off", &s->sees_off, R + 1) < 0 ||
        spec_array(spec, "sees_node", &s->sees_node, -1) < 0 ||
        spec_array(spec, "goal_off", &s->goal_off, R + 1) < 0 ||
        spec_array(spec, "goal_value", &s->goal_value, -1) < 0 ||
        spec_array(spec, "goal_node", &s->goal_node, -1) < 0)
        return -1;
    {
        const char *keys[4] = {"state_all", "move_all", "state_play", "move_play"};
        Program *programs[4] = {&s->state_all, &s->move_all, &s->state_play, &s->move_play};
        for (int i = 0; i < 4; i++) {
            int32_t *nodes = NULL;
            PyObject *v = PyDict_GetItemString(spec, keys[i]);
            if (!v) {
                PyErr_Format(PyExc_KeyError, "kernel spec misses %s", keys[i]);
                return -1;
            }
            if (spec_array(spec, keys[i], &nodes, -1) < 0) return -1;
            int rc = make_program(s, nodes, PyObject_Length(v) / 4, programs[i]);
            PyMem_Free(nodes);
            if (rc < 0) return -1;
        }
    }
    PyObject *z = PyDict_GetItemString(spec, "zobrist");
    if (!z || PyObject_GetBuffer(z, &view, PyBUF_SIMPLE) < 0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_KeyError, "kernel spec misses zobrist");
        return -1;
    }
    if (view.len != (Py_ssize_t)s->n_base * 8) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "zobrist: wrong length");
        return -1;
    }
    s->zobrist = (uint64_t *)PyMem_Malloc(s->n_base ? (size_t)s->n_base * 8 : 8);
    if (!s->zobrist) {
        PyBuffer_Release(&view);
        PyErr_NoMemory();
        return -1;
    }
    memcpy(s->zobrist, view.buf, view.len);
    PyBuffer_Release(&view);
    s->moves = PyDict_GetItemString(spec, "moves");
    if (!s->moves || !PyTuple_Check(s->moves) || PyTuple_GET_SIZE(s->moves) != R) {
        s->moves = NULL;
        PyErr_SetString(PyExc_ValueError, "moves: a tuple of one tuple per role");
        return -1;
    }
    for (int32_t r = 0; r < R; r++) {
        PyObject *t = PyTuple_GET_ITEM(s->moves, r);
        if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != s->move_off[r + 1] - s->move_off[r]) {
            s->moves = NULL;
            PyErr_SetString(PyExc_ValueError, "moves: each role's tuple must match move_off");
            return -1;
        }
    }
    Py_INCREF(s->moves);
    s->move_index = PyDict_GetItemString(spec, "move_index");
    if (!s->move_index || !PyTuple_Check(s->move_index) || PyTuple_GET_SIZE(s->move_index) != R) {
        s->move_index = NULL;
        PyErr_SetString(PyExc_ValueError, "move_index: a tuple of one dict per role");
        return -1;
    }
    for (int32_t r = 0; r < R; r++) {
        if (!PyDict_Check(PyTuple_GET_ITEM(s->move_index, r))) {
            s->move_index = NULL;
            PyErr_SetString(PyExc_ValueError, "move_index: a tuple of one dict per role");
            return -1;
        }
    }
    Py_INCREF(s->move_index);
    /* output slots: next bits, then each role's legal bits and sees bits, word aligned */
    s->base_words = (s->n_base + 63) / 64;
    s->input_words = (s->n_inputs + 63) / 64;
    s->legal_slot0 = (int32_t *)zalloc(sizeof(int32_t) * (R ? R : 1));
    s->sees_slot0 = (int32_t *)zalloc(sizeof(int32_t) * (R ? R : 1));
    if (!s->legal_slot0 || !s->sees_slot0) return -1;
    int32_t slots = s->base_words * 64;
    for (int32_t r = 0; r < R; r++) {
        s->legal_slot0[r] = slots;
        slots += ((s->move_off[r + 1] - s->move_off[r] + 63) / 64) * 64;
    }
    for (int32_t r = 0; r < R; r++) {
        s->sees_slot0[r] = slots;
        slots += ((s->sees_off[r + 1] - s->sees_off[r] + 63) / 64) * 64;
    }
    s->slot_words = slots / 64;
    /* node -> slots (CSR) */
    int32_t *degree = (int32_t *)zalloc(sizeof(int32_t) * (N + 1));
    if (!degree) return -1;
    for (int32_t k = 0; k < s->n_base; k++) degree[s->next_node[k]]++;
    for (int32_t r = 0; r < R; r++) {
        for (int32_t m = s->move_off[r]; m < s->move_off[r + 1]; m++) degree[s->legal_node[m]]++;
        for (int32_t p = s->sees_off[r]; p < s->sees_off[r + 1]; p++) degree[s->sees_node[p]]++;
    }
    s->slot_off = (int32_t *)zalloc(sizeof(int32_t) * (N + 1));
    if (!s->slot_off) {
        PyMem_Free(degree);
        return -1;
    }
    for (int32_t i = 0; i < N; i++) s->slot_off[i + 1] = s->slot_off[i] + degree[i];
    s->slot = (int32_t *)zalloc(sizeof(int32_t) * (s->slot_off[N] ? s->slot_off[N] : 1));
    if (!s->slot) {
        PyMem_Free(degree);
        return -1;
    }
    memset(degree, 0, sizeof(int32_t) * (N + 1));
#define ADD_SLOT(node, k)                                              \
    do {                                                               \
        int32_t _n = (node);                                           \
        s->slot[s->slot_off[_n] + degree[_n]++] = (k);                 \
    } while (0)
    for (int32_t k = 0; k < s->n_base; k++) ADD_SLOT(s->next_node[k], k);
    for (int32_t r = 0; r < R; r++) {
        for (int32_t m = s->move_off[r]; m < s->move_off[r + 1]; m++)
            ADD_SLOT(s->legal_node[m], s->legal_slot0[r] + (m - s->move_off[r]));
        for (int32_t p = s->sees_off[r]; p < s->sees_off[r + 1]; p++)
            ADD_SLOT(s->sees_node[p], s->sees_slot0[r] + (p - s->sees_off[r]));
    }
#undef ADD_SLOT
    PyMem_Free(degree);
    int32_t max_scc = 1;
    for (int32_t c = 0; c < s->n_scc; c++)
        if (s->scc_off[c + 1] - s->scc_off[c] > max_scc) max_scc = s->scc_off[c + 1] - s->scc_off[c];
    s->max_scc = max_scc;
    s->node = (Node *)zalloc(sizeof(Node) * (N ? N : 1));
    s->cur_base = (uint64_t *)zalloc((size_t)(s->base_words + 1) * 8);
    s->scratch_base = (uint64_t *)zalloc((size_t)(s->base_words + 1) * 8);
    s->cur_input = (uint64_t *)zalloc((size_t)(s->input_words + 1) * 8);
    s->scratch_input = (uint64_t *)zalloc((size_t)(s->input_words + 1) * 8);
    s->out_bits = (uint64_t *)zalloc((size_t)(s->slot_words + 1) * 8);
    s->scc_old = (uint8_t *)zalloc(max_scc);
    s->bucket = (int32_t *)PyMem_Malloc(sizeof(int32_t) * (s->n_levels ? s->n_levels : 1));
    if (!s->node || !s->cur_base || !s->scratch_base || !s->cur_input || !s->scratch_input ||
        !s->out_bits || !s->scc_old || !s->bucket) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return -1;
    }
    for (int32_t i = 0; i < s->n_levels; i++) s->bucket[i] = -1;
    for (int32_t id = 0; id < N; id++) {
        s->node[id].op = s->op[id];
        s->node[id].level = s->level[id];
        s->node[id].cyclic = s->scc[id] >= 0;
        s->node[id].link = -1;
    }
    s->lo = INT32_MAX;
    s->hi = -1;
    full_evaluation(s);
    return 0;
}

/* init_bits(init_nodes) -> int: the state whose bit k is the value of init_nodes[k] (constants). */
static PyObject *Net_values(Net *s, PyObject *nodes_obj) {
    int32_t *nodes = NULL;
    if (copy_int32(nodes_obj, &nodes, -1, "nodes") < 0) return NULL;
    Py_buffer view;
    PyObject_GetBuffer(nodes_obj, &view, PyBUF_SIMPLE);
    Py_ssize_t n = view.len / 4;
    PyBuffer_Release(&view);
    int32_t words = (int32_t)((n + 63) / 64);
    uint64_t *bits = (uint64_t *)zalloc((size_t)(words + 1) * 8);
    if (!bits) {
        PyMem_Free(nodes);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (nodes[i] >= 0 && nodes[i] < s->n_nodes && s->node[nodes[i]].val) bits[i >> 6] |= (uint64_t)1 << (i & 63);
    PyObject *result = words_to_int(bits, words);
    PyMem_Free(bits);
    PyMem_Free(nodes);
    return result;
}

static PyMethodDef Net_methods[] = {
    {"legal", (PyCFunction)(void (*)(void))Net_legal, METH_FASTCALL,
     "legal(key, role) -> tuple of the role's legal moves in the state"},
    {"legal_mask", (PyCFunction)(void (*)(void))Net_legal_mask, METH_FASTCALL,
     "legal_mask(key, role) -> int, bit i = the role's move i is legal"},
    {"next", (PyCFunction)(void (*)(void))Net_next, METH_FASTCALL,
     "next(key, moves) -> the successor's key; moves = one move index per role"},
    {"step", (PyCFunction)(void (*)(void))Net_step, METH_FASTCALL,
     "step(key, joint, owner) -> the successor State; joint = one move term per role"},
    {"sees", (PyCFunction)(void (*)(void))Net_sees, METH_FASTCALL,
     "sees(key, moves, role) -> int, bit i = the role sees its percept i"},
    {"terminal", (PyCFunction)Net_terminal, METH_O, "terminal(key) -> bool"},
    {"goals", (PyCFunction)Net_goals, METH_O, "goals(key) -> tuple of each role's goal value"},
    {"children", (PyCFunction)(void (*)(void))Net_children, METH_FASTCALL,
     "children(key[, owner]) -> (legal moves per role, successor keys (States of owner) in product order)"},
    {"zobrist", (PyCFunction)Net_zobrist, METH_O, "zobrist(key) -> the XOR of the true facts' words"},
    {"values", (PyCFunction)Net_values, METH_O,
     "values(nodes) -> int, bit i = node i's value (in the last state, all false at first)"},
    {"playouts", (PyCFunction)Net_playouts, METH_VARARGS, "bit-sliced random playouts"},
    {"evaluate", (PyCFunction)Net_evaluate, METH_VARARGS, "bit-sliced evaluation of many states"},
    {"front", (PyCFunction)Net_front, METH_VARARGS,
     "front(owner, roles, legal_fallback, next_fallback, terminal_fallback) -> Front"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject NetType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ggp_propnet_kernel.Net",
    .tp_basicsize = sizeof(Net),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A propositional network evaluated natively (see the module docstring).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Net_init,
    .tp_dealloc = (destructor)Net_dealloc,
    .tp_methods = Net_methods,
};

static PyMethodDef module_methods[] = {
    {"set_state_class", (PyCFunction)set_state_class, METH_O,
     "set_state_class(State): the class (with __slots__ key, owner, _hash) step() makes"},
    {NULL, NULL, 0, NULL}};

static PyModuleDef module = {PyModuleDef_HEAD_INIT, "ggp_propnet_kernel",
                             "The native propnet kernel of ggp.", -1, module_methods};

PyMODINIT_FUNC PyInit_ggp_propnet_kernel(void) {
    if (PyType_Ready(&NetType) < 0 || PyType_Ready(&FrontType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&NetType);
    if (PyModule_AddObject(m, "Net", (PyObject *)&NetType) < 0) {
        Py_DECREF(&NetType);
        Py_DECREF(m);
        return NULL;
    }
    IllegalMove = PyErr_NewException("ggp_propnet_kernel.IllegalMove", PyExc_ValueError, NULL);
    if (!IllegalMove || PyModule_AddObject(m, "IllegalMove", IllegalMove) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(IllegalMove);
    if (PyModule_AddIntConstant(m, "ABI", KERNEL_ABI) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
