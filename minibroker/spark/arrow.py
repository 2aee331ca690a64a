"""Spark's Kafka schema, and decoded record columns turned into Arrow batches of that schema."""

from __future__ import annotations

from typing import cast

import numpy as np
import pyarrow as pa
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from ..client.consumer import RecordColumns

HEADER_TYPE = StructType([StructField("key", StringType()), StructField("value", BinaryType())])


def kafka_schema(include_headers: bool) -> StructType:
    """The rows of Spark's Kafka source: key, value, topic, partition, offset, timestamp, timestampType[, headers]."""
    fields = [
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
        StructField("timestampType", IntegerType()),
    ]
    if include_headers:
        fields.append(StructField("headers", ArrayType(HEADER_TYPE)))
    return StructType(fields)


def arrow_schema(schema: StructType) -> pa.Schema:
    """The Arrow schema Spark expects back from a Python data source with `schema`."""
    from pyspark.sql.pandas.types import to_arrow_schema

    # exactly what pyspark compares returned batches against (timestamps in UTC, no large types)
    return to_arrow_schema(schema, timezone="UTC")


def _binary(values: list[bytes | None], arrow_type: pa.DataType) -> pa.Array:
    """A binary (or string) array; built from one joined buffer and offsets when there is no null."""
    count = len(values)
    if count and values.count(None) == count:
        return pa.nulls(count, arrow_type)
    if None in values:
        return pa.array(values, arrow_type)
    present = cast(list[bytes], values)
    lengths = np.fromiter(map(len, present), dtype=np.int64, count=count)
    offsets = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if offsets[-1] >= 2**31:  # too big for 32-bit offsets: let pyarrow split it into chunks
        return pa.array(values, arrow_type)
    return pa.Array.from_buffers(arrow_type, count, [None, pa.py_buffer(offsets.astype(np.int32)),
                                                     pa.py_buffer(b"".join(present))])


def _repeated_string(text: str, count: int) -> pa.Array:
    encoded = text.encode()
    offsets = np.arange(count + 1, dtype=np.int32) * len(encoded)
    return pa.Array.from_buffers(pa.string(), count, [None, pa.py_buffer(offsets), pa.py_buffer(encoded * count)])


def _headers(headers: list[list[tuple[str, bytes | None]]], arrow_type: pa.DataType) -> pa.Array:
    counts = np.fromiter(map(len, headers), dtype=np.int32, count=len(headers))
    offsets = np.zeros(len(headers) + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    flat = [pair for record in headers for pair in record]
    struct_type = arrow_type.value_type
    entries = pa.StructArray.from_arrays(
        [pa.array([key for key, _ in flat], struct_type.field(0).type),
         _binary([value for _, value in flat], struct_type.field(1).type)],
        fields=[struct_type.field(0), struct_type.field(1)])
    return pa.ListArray.from_arrays(pa.array(offsets), entries, type=arrow_type)


def to_record_batch(columns: RecordColumns, topic: str, partition: int, schema: pa.Schema) -> pa.RecordBatch:
    """One Arrow batch of `schema` (a subset or reordering of Spark's Kafka columns) from decoded records."""
    count = len(columns)
    arrays: list[pa.Array] = []
    for field in schema:
        name = field.name
        if name == "key":
            arrays.append(_binary(columns.keys, field.type))
        elif name == "value":
            arrays.append(_binary(columns.values, field.type))
        elif name == "topic":
            arrays.append(_repeated_string(topic, count))
        elif name == "partition":
            arrays.append(pa.array(np.full(count, partition, dtype=np.int32)))
        elif name == "offset":
            arrays.append(pa.array(columns.offsets, pa.int64()))
        elif name == "timestamp":
            micros = np.array(columns.timestamps, dtype=np.int64) * 1000
            arrays.append(pa.array(micros, field.type))
        elif name == "timestampType":
            arrays.append(pa.array(columns.timestamp_types, pa.int32()))
        elif name == "headers":
            if columns.headers is None:
                raise ValueError("headers were not decoded (includeHeaders is false)")
            arrays.append(_headers(columns.headers, field.type))
        else:
            raise ValueError(f"the Kafka source has no column {name!r}")
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
