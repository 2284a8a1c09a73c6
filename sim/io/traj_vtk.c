/* SPDX-License-Identifier: MIT
 * nbsim — ParaView series: a .pvd collection and one VTK XML unstructured grid (.vtu) per frame,
 * the files ParaView, VisIt and VTK's readers open (docs/trajectories.md: how to look at them).
 *
 * run.pvd lists its frames by simulated time; they sit in the folder run/ beside it (made when
 * missing), as run/run_000000.vtu, run/run_000001.vtu, ... (frame index in the series, six
 * digits and more past a million), the layout of ParaView's own .pvd writer and Firedrake's, which
 * keeps thousands of frames out of the .pvd's own folder. A frame's .vtu:
 *
 *   Points       the N bodies' centres, in the scene's order, then two points for each contact
 *                across a periodic face (below)
 *   PointData    id (Int64: 1..N, 0 on a half segment's end), radius, mass, velocity, force (the
 *                last total force), and with friction angular_velocity (Float64, SI units)
 *   Cells        one VTK_POLY_VERTEX of the N bodies (so that ParaView draws them as points),
 *                then one VTK_LINE per contact, from body i to body j (j < i)
 *   CellData     body_ids (Int64 x 2: the ids of i and j; 0 0 on the poly-vertex), overlap [m],
 *                normal_force and tangential_force (the force on i from j [N]; j feels its
 *                negative) and their magnitudes normal_force_magnitude, tangential_force_
 *                magnitude (zeros on the poly-vertex; tangential zero without friction); the four
 *                force arrays only for a writer that knows the law (opened with parameters)
 *   FieldData    TimeValue (the simulated time [s], which ParaView's file series read), step,
 *                box_half [m], periodic (bit 0 x, 1 y, 2 z), contacts (their count)
 *
 * A contact across a periodic face is drawn as two half segments, each from one body towards
 * the other's nearest image, ending at the contact's middle in its own image (the two extra
 * points); both halves carry the contact's values. Contacts with walls are not drawn (their
 * force is in the bodies' force). The contacts and their forces: traj_contacts.c.
 *
 * Encoding: every array as raw binary appended data (one block after the XML, each array a
 * UInt64 byte count and its values, header_type="UInt64", the machine's byte order), so a frame
 * costs its bytes and no text formatting. Values are Float64 whatever the backend: a float state
 * widens exactly.
 *
 * Whole frames: a .vtu is written under a temporary name in the folder (NAME.vtu.part) and
 * renamed into place when complete; the .pvd then gets its line, written with the closing tags
 * in one write over the old closing tags, so the .pvd is a valid series after every frame. A
 * frame that fails removes its files and puts the closing tags back. */
#define _POSIX_C_SOURCE 200809L

#include "io/traj_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define VTK_POLY_VERTEX 2
#define VTK_LINE 3
#define VTK_BUFFER_BYTES (1u << 20)

static const char pvd_footer[] = "  </Collection>\n</VTKFile>\n";

typedef struct {
    int fd;
    char *buf;
    size_t len;
    uint64_t total; /* bytes handed to the file */
    int error;      /* errno of the first failed write, 0 while none */
} vtk_out;

typedef struct {
    int pvd_fd;
    uint64_t footer_at; /* where the .pvd's closing tags start [bytes] */
    char *folder;       /* the frames' folder, as a path */
    char *stem;         /* the frames' base name ("run" for run.pvd) */
    char *entry_dir;    /* the folder as the .pvd names it (relative, XML-escaped) */
    traj_contacts contacts;
    vtk_out out;
} vtk_state;

/* ---- buffered raw output ---- */

static void out_flush(vtk_out *o) {
    size_t done = 0;
    while (o->error == 0 && done < o->len) {
        const ssize_t k = write(o->fd, o->buf + done, o->len - done);
        if (k < 0 && errno == EINTR) {
            continue;
        }
        if (k <= 0) {
            o->error = k < 0 ? errno : EIO;
            break;
        }
        done += (size_t)k;
    }
    o->total += done;
    o->len = 0;
}

static void out_put(vtk_out *o, const void *p, size_t n) {
    const char *c = p;
    while (n > 0 && o->error == 0) {
        if (o->len == VTK_BUFFER_BYTES) {
            out_flush(o);
        }
        const size_t room = VTK_BUFFER_BYTES - o->len;
        const size_t k = n < room ? n : room;
        memcpy(o->buf + o->len, c, k);
        o->len += k;
        c += k;
        n -= k;
    }
}

static void out_text(vtk_out *o, const char *s) {
    out_put(o, s, strlen(s));
}

static void out_f64(vtk_out *o, double v) {
    out_put(o, &v, sizeof v);
}

static void out_f64x3(vtk_out *o, double x, double y, double z) {
    const double v[3] = {x, y, z};
    out_put(o, v, sizeof v);
}

static void out_i64(vtk_out *o, int64_t v) {
    out_put(o, &v, sizeof v);
}

static void out_block(vtk_out *o, uint64_t bytes) { /* an appended array's header */
    out_put(o, &bytes, sizeof bytes);
}

/* ---- names ---- */

/* s with XML's five special characters escaped (for attribute values); NULL: no memory. */
static char *xml_escape(const char *s) {
    char *out = malloc(6 * strlen(s) + 1), *p = out;
    for (; out != NULL && *s; ++s) {
        const char *r = *s == '&'    ? "&amp;"
                        : *s == '<'  ? "&lt;"
                        : *s == '>'  ? "&gt;"
                        : *s == '"'  ? "&quot;"
                        : *s == '\'' ? "&apos;"
                                     : NULL;
        if (r != NULL) {
            strcpy(p, r);
            p += strlen(r);
        } else {
            *p++ = *s;
        }
    }
    if (out != NULL) {
        *p = '\0';
    }
    return out;
}

static char *dup_n(const char *s, size_t n) {
    char *c = malloc(n + 1);
    if (c != NULL) {
        memcpy(c, s, n);
        c[n] = '\0';
    }
    return c;
}

/* Frame k's file: FOLDER/STEM_00000k.vtu, with `suffix` (".part": its temporary). */
static char *frame_path(const vtk_state *v, uint64_t k, const char *suffix) {
    const size_t cap = strlen(v->folder) + strlen(v->stem) + 48;
    char *p = malloc(cap);
    if (p != NULL) {
        snprintf(p, cap, "%s/%s_%06llu.vtu%s", v->folder, v->stem, (unsigned long long)k, suffix);
    }
    return p;
}

/* ---- one frame ---- */

static const char *byte_order(void) {
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1 ? "LittleEndian" : "BigEndian";
}

typedef struct {
    uint64_t offset; /* the next array's offset in the appended block */
    char *xml;
    size_t len, cap;
} vtk_header;

static void header_printf(vtk_header *h, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    const int k = vsnprintf(h->xml + h->len, h->cap - h->len, fmt, ap);
    va_end(ap);
    SIM_ASSERT(k >= 0 && h->len + (size_t)k < h->cap);
    h->len += (size_t)k;
}

/* An appended array of `tuples` x `comps` values of `bytes` each. */
static void header_array(vtk_header *h, const char *type, const char *name, int comps,
                         uint64_t tuples, int bytes) {
    header_printf(h,
                  "        <DataArray type=\"%s\" Name=\"%s\" NumberOfComponents=\"%d\" "
                  "format=\"appended\" offset=\"%llu\"/>\n",
                  type, name, comps, (unsigned long long)h->offset);
    h->offset += 8u + tuples * (uint64_t)comps * (uint64_t)bytes;
}

/* What one frame's file holds: its counts. */
typedef struct {
    uint64_t n, points, lines, cells, wrapped;
    int spin, law;
} vtk_sizes;

static void write_header(vtk_out *o, const sim_traj_frame *f, const vtk_sizes *z) {
    char xml[8192], t[32], b[32];
    vtk_header h = {0, xml, 0, sizeof xml};
    traj_fmt_double(t, sizeof t, f->time);
    traj_fmt_double(b, sizeof b, f->box_half);
    header_printf(&h,
                  "<?xml version=\"1.0\"?>\n"
                  "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"%s\" "
                  "header_type=\"UInt64\">\n"
                  "  <UnstructuredGrid>\n"
                  "    <FieldData>\n"
                  "      <DataArray type=\"Float64\" Name=\"TimeValue\" NumberOfTuples=\"1\" "
                  "format=\"ascii\">%s</DataArray>\n"
                  "      <DataArray type=\"Int64\" Name=\"step\" NumberOfTuples=\"1\" "
                  "format=\"ascii\">%llu</DataArray>\n"
                  "      <DataArray type=\"Float64\" Name=\"box_half\" NumberOfTuples=\"1\" "
                  "format=\"ascii\">%s</DataArray>\n"
                  "      <DataArray type=\"Int32\" Name=\"periodic\" NumberOfTuples=\"1\" "
                  "format=\"ascii\">%d</DataArray>\n"
                  "      <DataArray type=\"Int64\" Name=\"contacts\" NumberOfTuples=\"1\" "
                  "format=\"ascii\">%llu</DataArray>\n"
                  "    </FieldData>\n"
                  "    <Piece NumberOfPoints=\"%llu\" NumberOfCells=\"%llu\">\n"
                  "      <PointData Scalars=\"radius\" Vectors=\"velocity\">\n",
                  byte_order(), t, (unsigned long long)f->step, b, f->periodic,
                  (unsigned long long)(z->lines - z->wrapped), (unsigned long long)z->points,
                  (unsigned long long)z->cells);
    header_array(&h, "Int64", "id", 1, z->points, 8);
    header_array(&h, "Float64", "radius", 1, z->points, 8);
    header_array(&h, "Float64", "mass", 1, z->points, 8);
    header_array(&h, "Float64", "velocity", 3, z->points, 8);
    header_array(&h, "Float64", "force", 3, z->points, 8);
    if (z->spin) {
        header_array(&h, "Float64", "angular_velocity", 3, z->points, 8);
    }
    header_printf(&h, "      </PointData>\n");
    if (z->law) {
        header_printf(&h, "      <CellData Scalars=\"normal_force_magnitude\" "
                          "Vectors=\"normal_force\">\n");
    } else {
        header_printf(&h, "      <CellData Scalars=\"overlap\">\n");
    }
    header_array(&h, "Int64", "body_ids", 2, z->cells, 8);
    header_array(&h, "Float64", "overlap", 1, z->cells, 8);
    if (z->law) {
        header_array(&h, "Float64", "normal_force", 3, z->cells, 8);
        header_array(&h, "Float64", "normal_force_magnitude", 1, z->cells, 8);
        header_array(&h, "Float64", "tangential_force", 3, z->cells, 8);
        header_array(&h, "Float64", "tangential_force_magnitude", 1, z->cells, 8);
    }
    header_printf(&h, "      </CellData>\n      <Points>\n");
    header_array(&h, "Float64", "Points", 3, z->points, 8);
    header_printf(&h, "      </Points>\n      <Cells>\n");
    header_array(&h, "Int64", "connectivity", 1, z->n + 2 * z->lines, 8);
    header_array(&h, "Int64", "offsets", 1, z->cells, 8);
    header_array(&h, "UInt8", "types", 1, z->cells, 1);
    header_printf(&h, "      </Cells>\n    </Piece>\n  </UnstructuredGrid>\n"
                      "  <AppendedData encoding=\"raw\">\n   _");
    out_put(o, xml, h.len);
}

/* One point array's values for the N bodies: field 0 id, 1 radius, 2 mass, 3 velocity, 4 force,
 * 5 angular velocity, 6 position. */
static void write_bodies(vtk_out *o, const sim_traj_frame *f, int field) {
    for (uint32_t i = 0; i < f->n; ++i) {
        traj_body b;
        traj_frame_body(f, i, &b);
        switch (field) {
        case 0:
            out_i64(o, (int64_t)i + 1);
            break;
        case 1:
            out_f64(o, b.radius);
            break;
        case 2:
            out_f64(o, b.mass);
            break;
        case 3:
            out_f64x3(o, b.vel[0], b.vel[1], b.vel[2]);
            break;
        case 4:
            out_f64x3(o, b.force[0], b.force[1], b.force[2]);
            break;
        case 5:
            out_f64x3(o, b.spin[0], b.spin[1], b.spin[2]);
            break;
        default:
            out_f64x3(o, b.pos[0], b.pos[1], b.pos[2]);
            break;
        }
    }
}

/* A point array (fields 0-5 of write_bodies): the bodies', then zeros on the half segments' ends
 * (id 0, radius 0: nothing a glyph draws). */
static void write_point_array(vtk_out *o, const sim_traj_frame *f, const vtk_sizes *z, int field) {
    const int comps = field <= 2 ? 1 : 3;
    out_block(o, z->points * 8u * (uint64_t)comps);
    write_bodies(o, f, field);
    const double zeros[3] = {0.0, 0.0, 0.0};
    for (uint64_t e = z->n; e < z->points; ++e) {
        out_put(o, zeros, (size_t)comps * sizeof(double));
    }
}

static void write_frame(vtk_out *o, const sim_traj_frame *f, const vtk_sizes *z,
                        const traj_contacts *c) {
    write_header(o, f, z);
    const uint64_t C = z->cells;
    /* PointData: id, radius, mass, velocity, force, angular_velocity */
    for (int field = 0; field <= (z->spin ? 5 : 4); ++field) {
        write_point_array(o, f, z, field);
    }
    /* CellData: the poly-vertex's zeros, then each contact's line (a wrapped one's twice) */
    const int arrays = z->law ? 6 : 2;
    for (int a = 0; a < arrays; ++a) {
        static const int comps[6] = {2, 1, 3, 1, 3, 1};
        out_block(o, C * 8u * (uint64_t)comps[a]);
        const double zeros[3] = {0.0, 0.0, 0.0};
        if (a == 0) {
            out_i64(o, 0);
            out_i64(o, 0);
        } else {
            out_put(o, zeros, (size_t)comps[a] * sizeof(double));
        }
        for (uint64_t k = 0; k < c->count; ++k) {
            const traj_contact *t = &c->v[k];
            for (int half = 0; half < (t->wrapped ? 2 : 1); ++half) {
                switch (a) {
                case 0:
                    out_i64(o, (int64_t)t->i + 1);
                    out_i64(o, (int64_t)t->j + 1);
                    break;
                case 1:
                    out_f64(o, t->overlap);
                    break;
                case 2:
                    out_f64x3(o, t->fn.x, t->fn.y, t->fn.z);
                    break;
                case 3:
                    out_f64(o, sqrt(t->fn.x * t->fn.x + t->fn.y * t->fn.y + t->fn.z * t->fn.z));
                    break;
                case 4:
                    out_f64x3(o, t->ft.x, t->ft.y, t->ft.z);
                    break;
                default:
                    out_f64(o, sqrt(t->ft.x * t->ft.x + t->ft.y * t->ft.y + t->ft.z * t->ft.z));
                    break;
                }
            }
        }
    }
    /* Points: the bodies, then the ends of the half segments, i's then j's, contact by contact */
    out_block(o, z->points * 24);
    write_bodies(o, f, 6);
    for (uint64_t k = 0; k < c->count && o->error == 0; ++k) {
        const traj_contact *t = &c->v[k];
        if (t->wrapped) {
            traj_body bi, bj;
            traj_frame_body(f, t->i, &bi);
            traj_frame_body(f, t->j, &bj);
            out_f64x3(o, bi.pos[0] - 0.5 * t->d.x, bi.pos[1] - 0.5 * t->d.y,
                      bi.pos[2] - 0.5 * t->d.z);
            out_f64x3(o, bj.pos[0] + 0.5 * t->d.x, bj.pos[1] + 0.5 * t->d.y,
                      bj.pos[2] + 0.5 * t->d.z);
        }
    }
    /* Cells: connectivity, offsets, types */
    out_block(o, (z->n + 2 * z->lines) * 8);
    for (uint32_t i = 0; i < f->n; ++i) {
        out_i64(o, i);
    }
    uint64_t extra = z->n;
    for (uint64_t k = 0; k < c->count; ++k) {
        const traj_contact *t = &c->v[k];
        out_i64(o, t->i);
        if (t->wrapped) {
            out_i64(o, (int64_t)extra);
            out_i64(o, t->j);
            out_i64(o, (int64_t)extra + 1);
            extra += 2;
        } else {
            out_i64(o, t->j);
        }
    }
    out_block(o, C * 8);
    out_i64(o, (int64_t)z->n);
    for (uint64_t l = 1; l <= z->lines; ++l) {
        out_i64(o, (int64_t)(z->n + 2 * l));
    }
    out_block(o, C);
    const unsigned char poly = VTK_POLY_VERTEX, line = VTK_LINE;
    out_put(o, &poly, 1);
    for (uint64_t l = 0; l < z->lines; ++l) {
        out_put(o, &line, 1);
    }
    out_text(o, "\n  </AppendedData>\n</VTKFile>\n");
}

/* ---- the writer ---- */

static sim_status io_fail(const char *path, int e, sim_error *err) {
    return sim_fail(err, SIM_IO, "cannot write trajectory '%s': %s", path, strerror(e));
}

/* A frame that failed (errno e, in `file`): the series keeps its complete frames. */
static sim_status frame_fail(const sim_traj_writer *w, const char *file, int e, sim_error *err) {
    return sim_fail(err, SIM_IO,
                    "cannot write trajectory '%s' (frame %llu, '%s'): %s; it keeps its %llu "
                    "complete frame%s",
                    w->path, (unsigned long long)w->frames, file, strerror(e),
                    (unsigned long long)w->frames, w->frames == 1 ? "" : "s");
}

/* Writes s (n bytes) at offset `at` of fd whole; 0 or the errno. */
static int pwrite_all(int fd, const char *s, size_t n, uint64_t at) {
    while (n > 0) {
        const ssize_t k = pwrite(fd, s, n, (off_t)at);
        if (k < 0 && errno == EINTR) {
            continue;
        }
        if (k <= 0) {
            return k < 0 ? errno : EIO;
        }
        s += k;
        n -= (size_t)k;
        at += (uint64_t)k;
    }
    return 0;
}

static sim_status vtk_write(sim_traj_writer *w, const sim_traj_frame *f, sim_error *err) {
    vtk_state *v = w->vtk;
    SIM_TRY(traj_contacts_find(&v->contacts, f, w->has_params ? &w->params : NULL, w->path, err));
    const traj_contacts *c = &v->contacts;
    vtk_sizes z = {.n = f->n, .spin = w->spin, .law = w->has_params};
    z.wrapped = c->wrapped;
    z.points = z.n + 2 * c->wrapped;
    z.lines = c->count + c->wrapped;
    z.cells = 1 + z.lines;

    char *part = frame_path(v, w->frames, ".part"), *final = frame_path(v, w->frames, "");
    char entry[4096 + 256];
    if (part == NULL || final == NULL) {
        free(part);
        free(final);
        return sim_fail(err, SIM_OUT_OF_MEMORY, "trajectory '%s': no memory for a frame's name",
                        w->path);
    }
    sim_status st = SIM_OK;
    vtk_out *o = &v->out;
    o->fd = open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (o->fd < 0) {
        st = frame_fail(w, part, errno, err);
    } else {
        o->len = 0;
        o->total = 0;
        o->error = 0;
        write_frame(o, f, &z, c);
        out_flush(o);
        const int closed = close(o->fd) == 0 ? 0 : errno;
        o->fd = -1;
        const int e = o->error ? o->error : closed;
        if (e == 0 && rename(part, final) == 0) {
            char t[32];
            traj_fmt_double(t, sizeof t, f->time);
            const int len =
                snprintf(entry, sizeof entry,
                         "    <DataSet timestep=\"%s\" group=\"\" part=\"0\" "
                         "file=\"%s/%s_%06llu.vtu\"/>\n%s",
                         t, v->entry_dir, v->stem, (unsigned long long)w->frames, pvd_footer);
            SIM_ASSERT(len > 0 && (size_t)len < sizeof entry);
            const int pe = pwrite_all(v->pvd_fd, entry, (size_t)len, v->footer_at);
            if (pe == 0) {
                const uint64_t line = (uint64_t)len - (sizeof pvd_footer - 1);
                v->footer_at += line;
                w->frames++;
                w->bytes += o->total + line;
            } else {
                /* the old closing tags back, and nothing after them */
                (void)pwrite_all(v->pvd_fd, pvd_footer, sizeof pvd_footer - 1, v->footer_at);
                (void)ftruncate(v->pvd_fd, (off_t)(v->footer_at + sizeof pvd_footer - 1));
                unlink(final);
                st = frame_fail(w, w->path, pe, err);
            }
        } else {
            st = frame_fail(w, e ? part : final, e ? e : errno, err);
            unlink(part);
        }
    }
    free(part);
    free(final);
    return st;
}

static void vtk_free(vtk_state *v) {
    traj_contacts_free(&v->contacts);
    free(v->folder);
    free(v->stem);
    free(v->entry_dir);
    free(v->out.buf);
    free(v);
}

static sim_status vtk_close(sim_traj_writer *w, sim_error *err) {
    vtk_state *v = w->vtk;
    sim_status st = SIM_OK;
    if (v == NULL) {
        return st;
    }
    /* Late write-back errors (a full disk on delayed allocation) surface here. */
    if (fdatasync(v->pvd_fd) != 0 && errno != EINVAL && errno != EROFS) {
        st = io_fail(w->path, errno, err);
    }
    if (close(v->pvd_fd) != 0 && st == SIM_OK) {
        st = io_fail(w->path, errno, err);
    }
    vtk_free(v);
    w->vtk = NULL;
    return st;
}

static const sim_traj_writer_ops vtk_ops = {vtk_write, vtk_close};

sim_status traj_vtk_open(sim_traj_writer *w, sim_error *err) {
    const char *path = w->path;
    const char *slash = strrchr(path, '/');
    const char *base = slash != NULL ? slash + 1 : path;
    const size_t stem_len = strlen(base) - strlen(".pvd");
    if (stem_len == 0) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "'%s': name the series (NAME.pvd: its frames go to the folder NAME)", path);
    }
    vtk_state *v = calloc(1, sizeof *v);
    if (v == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "'%s': no memory for a trajectory writer", path);
    }
    v->pvd_fd = -1;
    v->out.fd = -1;
    v->folder = dup_n(path, strlen(path) - strlen(".pvd"));
    v->stem = dup_n(base, stem_len);
    v->entry_dir = v->stem != NULL ? xml_escape(v->stem) : NULL;
    v->out.buf = malloc(VTK_BUFFER_BYTES);
    if (v->folder == NULL || v->stem == NULL || v->entry_dir == NULL || v->out.buf == NULL) {
        vtk_free(v);
        return sim_fail(err, SIM_OUT_OF_MEMORY, "'%s': no memory for a trajectory writer", path);
    }
    /* The frames' folder first: a .pvd left without it would list nothing readable. */
    int made = 0;
    struct stat info;
    sim_status st = SIM_OK;
    if (mkdir(v->folder, 0777) == 0) {
        made = 1;
    } else if (errno != EEXIST) {
        st = sim_fail(err, SIM_IO, "cannot write trajectory '%s': cannot make its folder '%s': %s",
                      path, v->folder, strerror(errno));
    } else if (stat(v->folder, &info) != 0 || !S_ISDIR(info.st_mode)) {
        st = sim_fail(err, SIM_IO,
                      "cannot write trajectory '%s': '%s' exists and is not a folder (a .pvd's "
                      "frames go to the folder of its name)",
                      path, v->folder);
    } else if (access(v->folder, W_OK | X_OK) != 0) {
        st = sim_fail(err, SIM_IO, "cannot write trajectory '%s': its folder '%s': %s", path,
                      v->folder, strerror(errno));
    }
    if (st == SIM_OK) {
        v->pvd_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (v->pvd_fd < 0) {
            st = io_fail(path, errno, err);
        }
    }
    if (st == SIM_OK) {
        char head[256];
        const int len = snprintf(head, sizeof head,
                                 "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" "
                                 "version=\"0.1\" byte_order=\"%s\">\n  <Collection>\n%s",
                                 byte_order(), pvd_footer);
        const int e = pwrite_all(v->pvd_fd, head, (size_t)len, 0);
        if (e != 0) {
            st = io_fail(path, e, err);
        }
        v->footer_at = (uint64_t)len - (sizeof pvd_footer - 1);
        w->bytes = (uint64_t)len;
    }
    if (st != SIM_OK) { /* nothing is left behind */
        if (v->pvd_fd >= 0) {
            close(v->pvd_fd);
            unlink(path);
        }
        if (made) {
            rmdir(v->folder);
        }
        vtk_free(v);
        w->bytes = 0;
        return st;
    }
    w->vtk = v;
    w->ops = &vtk_ops;
    return SIM_OK;
}
