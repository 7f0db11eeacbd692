/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_structs.h — template data for the struct and union classes of the
 * driver module (templates/driver/structs.c.tmpl, runtime/module/bind_struct.h).
 */
#ifndef CUBIND_RENDER_STRUCTS_H
#define CUBIND_RENDER_STRUCTS_H

#include "classify/classify.h"
#include "model/model.h"
#include "tmpl/tmpl.h"

/* The struct tables of the records c classified (classify_records.h). A
 * map:
 *   records: one entry per model record, in model order (so a struct class
 *            index is the record's index in model.records, as
 *            cb_pclass.record_index is): index, name (the class name),
 *            doc (C literal), size, align, nfields, fields;
 *   fields:  the record's fields, anonymous members flattened into it:
 *            name, offset, size, kind (a cbs_field_kind enumerator), ref
 *            (enum, handle or struct index; -1), count, bit_width,
 *            bit_offset;
 *            and per record: extents (its host-bytes rules: buffer,
 *            writes, when, when_value, terms as field indexes),
 *            nextents, has_extents, checked (cbs_struct_def.checked),
 *            has_ptr and constructors (a snake_case module's `ptr` and
 *            from_ptr / from_buffer / from_data, where no field takes
 *            those names: cbs_struct_def.constructors);
 *   count:   the number of records;
 *   aliases: {name, index} for every module attribute naming a class.
 * Handle indices are indices in c's handle classes (c->handles). */
tv *structs_value(const cb_model *m, const cb_classes *c);

#endif
