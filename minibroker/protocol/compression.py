"""Compression codecs of record batches and message sets: Kafka's CompressionType and Compression classes.

A codec is the id a batch's (or a magic 0/1 wrapper message's) attributes carry in their low three bits
(CompressionType: none, gzip, snappy, lz4, zstd). Each codec compresses a records section, decompresses it
whole, or decompresses it incrementally under a bound (`iter_decompressed`, as Kafka's GzipCompression,
SnappyCompression, Lz4Compression and ZstdCompression wrap their streams). Also the LZ4 frame as Kafka's
Lz4BlockOutputStream writes it and the header checksum its input stream forgives (KAFKA-3160), which magic 0
message sets need.

The codec libraries (cramjam, lz4, zstandard) are imported by the functions that use them, on first use: a broker
whose clients never compress does not load them.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Generator, Iterator

from .errors import DecompressionLimitError, ErrorCode, KafkaError

COMPRESSION_NONE = 0
COMPRESSION_GZIP = 1
COMPRESSION_SNAPPY = 2
COMPRESSION_LZ4 = 3
COMPRESSION_ZSTD = 4
COMPRESSION_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}


def decompress(codec: int, payload: bytes | memoryview) -> bytes:
    """The uncompressed records section of a batch compressed with `codec`."""
    if codec == COMPRESSION_NONE:
        return bytes(payload)
    import cramjam

    if codec == COMPRESSION_GZIP:
        return bytes(cramjam.gzip.decompress(bytes(payload)))
    if codec == COMPRESSION_SNAPPY:
        return _snappy_decompress(bytes(payload))
    if codec == COMPRESSION_LZ4:
        return bytes(cramjam.lz4.decompress(bytes(payload)))
    if codec == COMPRESSION_ZSTD:
        return bytes(cramjam.zstd.decompress(bytes(payload)))
    raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, f"Unknown compression type id: {codec}")


_XERIAL_MAGIC = b"\x82SNAPPY\x00"


def _snappy_decompress(payload: bytes) -> bytes:
    import cramjam

    # Java and librdkafka clients write Xerial-framed snappy: a 16-byte header,
    # then blocks of (int32 length, raw snappy block).
    if payload.startswith(_XERIAL_MAGIC):
        out = []
        pos = 16
        while pos < len(payload):
            (length,) = struct.unpack_from(">i", payload, pos)
            pos += 4
            out.append(bytes(cramjam.snappy.decompress_raw(payload[pos : pos + length])))
            pos += length
        return b"".join(out)
    return bytes(cramjam.snappy.decompress_raw(payload))


DECOMPRESSION_CHUNK = 64 * 1024  # output per step; below glibc's mmap threshold, so steps reuse the heap


def iter_decompressed(codec: int, payload: bytes | bytearray | memoryview, limit: int,
                      chunk: int = DECOMPRESSION_CHUNK) -> Iterator[bytes]:
    """The records section of a compressed batch, decompressed incrementally in pieces.

    Never produces more than `limit` bytes in all: DecompressionLimitError as soon as the
    output would pass it, so a small batch that expands enormously costs at most `limit`.
    A codec stream that cannot be decoded raises KafkaError(UNKNOWN_SERVER_ERROR): Kafka's
    decompressing streams fail with a KafkaException ("Failed to decompress record stream"),
    which reaches the client as UNKNOWN_SERVER_ERROR. A stream that merely ends early just ends
    (the record reader then reports the premature end, as Kafka's EOFException path does).
    """
    pieces = _decompress_pieces(codec, memoryview(payload), limit, chunk)
    total = 0
    try:
        for piece in pieces:
            total += len(piece)
            if total > limit:
                raise DecompressionLimitError(limit)
            if piece:
                yield piece
    except DecompressionLimitError:
        raise DecompressionLimitError(limit) from None
    except KafkaError:
        raise
    except Exception as exc:  # each codec library raises its own error types on corrupt input
        raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, "Failed to decompress record stream") from exc
    finally:
        pieces.close()


def _decompress_pieces(codec: int, payload: memoryview, limit: int, chunk: int
                       ) -> Generator[bytes, None, None]:
    if codec == COMPRESSION_GZIP:
        yield from _gzip_pieces(payload, chunk)
    elif codec == COMPRESSION_SNAPPY:
        yield from _snappy_pieces(payload, limit)
    elif codec == COMPRESSION_LZ4:
        yield from _lz4_pieces(payload, chunk)
    elif codec == COMPRESSION_ZSTD:
        import zstandard

        reader = zstandard.ZstdDecompressor().stream_reader(payload, read_across_frames=True)
        while piece := reader.read(chunk):
            yield piece
    else:
        raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, f"Unknown compression type id: {codec}")


_GZIP_MAGIC = b"\x1f\x8b"


def _gzip_pieces(payload: memoryview, chunk: int) -> Iterator[bytes]:
    # Java's GZIPInputStream reads concatenated members and ignores what follows the last one.
    data: bytes | memoryview = payload
    while True:
        member = zlib.decompressobj(16 + zlib.MAX_WBITS)
        while not member.eof:
            piece = member.decompress(data, chunk)
            data = member.unconsumed_tail
            if not piece and not data:
                return  # the input ended inside the member
            yield piece
        data = member.unused_data
        if not data.startswith(_GZIP_MAGIC):
            return


def _snappy_pieces(payload: memoryview, limit: int) -> Iterator[bytes]:
    # Xerial framing (Java, librdkafka): a 16-byte header, then blocks of (int32 length, raw
    # snappy block); anything else is one raw block, as snappy-java's SnappyInputStream reads it.
    # A raw block declares its uncompressed size first, checked here before anything is allocated.
    if bytes(payload[:8]) != _XERIAL_MAGIC:
        yield _snappy_block(payload, limit)
        return
    pos = 16
    while pos < len(payload):
        if len(payload) - pos < 4:
            raise ValueError("truncated xerial block length")
        (length,) = struct.unpack_from(">i", payload, pos)
        pos += 4
        if length < 0 or pos + length > len(payload):
            raise ValueError(f"invalid xerial block length {length}")
        block = _snappy_block(payload[pos : pos + length], limit)
        limit -= len(block)
        yield block
        pos += length


def _snappy_block(block: memoryview, limit: int) -> bytes:
    import cramjam

    declared = int(cramjam.snappy.decompress_raw_len(block))
    if declared > limit:
        raise DecompressionLimitError(limit)
    return bytes(cramjam.snappy.decompress_raw(block))


def _lz4_pieces(payload: memoryview, chunk: int) -> Iterator[bytes]:
    import lz4.frame

    decompressor = lz4.frame.LZ4FrameDecompressor()
    piece = decompressor.decompress(payload, max_length=chunk)
    while True:
        yield piece
        if decompressor.eof or decompressor.needs_input:
            return  # the frame ended, or the input ended inside it
        piece = decompressor.decompress(b"", max_length=chunk)


def compress(codec: int, payload: bytes) -> bytes:
    """Compress a records section with `codec` (raw snappy, lz4 frame)."""
    if codec == COMPRESSION_NONE:
        return payload
    import cramjam

    if codec == COMPRESSION_GZIP:
        return bytes(cramjam.gzip.compress(payload))
    if codec == COMPRESSION_SNAPPY:
        return bytes(cramjam.snappy.compress_raw(payload))
    if codec == COMPRESSION_LZ4:
        return bytes(cramjam.lz4.compress(payload))
    if codec == COMPRESSION_ZSTD:
        return bytes(cramjam.zstd.compress(payload))
    raise ValueError(f"unknown compression codec {codec}")



_XXH32_PRIME = (0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D, 0x27D4EB2F, 0x165667B1)
_U32 = 0xFFFFFFFF


def _rotl32(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (32 - bits))) & _U32


def xxh32_short(data: bytes) -> int:
    """XXH32 (seed 0) of fewer than 16 bytes, enough for an LZ4 frame descriptor."""
    if len(data) >= 16:
        raise ValueError("xxh32_short hashes fewer than 16 bytes")
    p1, p2, p3, p4, p5 = _XXH32_PRIME
    acc = (p5 + len(data)) & _U32
    whole = len(data) - len(data) % 4
    for pos in range(0, whole, 4):
        acc = _rotl32((acc + int.from_bytes(data[pos:pos + 4], "little") * p3) & _U32, 17) * p4 & _U32
    for byte in data[whole:]:
        acc = _rotl32((acc + byte * p5) & _U32, 11) * p1 & _U32
    acc = (acc ^ (acc >> 15)) * p2 & _U32
    acc = (acc ^ (acc >> 13)) * p3 & _U32
    return acc ^ (acc >> 16)


_LZ4_FRAME_MAGIC = b"\x04\x22\x4d\x18"


def kafka_lz4_frame(payload: bytes, broken_header_checksum: bool = False) -> bytes:
    """An LZ4 frame as Kafka's Lz4BlockOutputStream writes it: independent 64 KB blocks, no checksums but the
    header's; `broken_header_checksum` hashes the frame magic into it too, as Kafka 0.8 did and Kafka still
    does for magic 0 message sets (useBrokenFlagDescriptorChecksum, KAFKA-3160)."""
    import lz4.frame

    frame = lz4.frame.compress(payload, block_size=lz4.frame.BLOCKSIZE_MAX64KB, block_linked=False,
                               content_checksum=False, block_checksum=False, store_size=False)
    if not broken_header_checksum:
        return frame
    broken = (xxh32_short(frame[:6]) >> 8) & 0xFF  # magic (4 bytes), FLG, BD
    return frame[:6] + bytes((broken,)) + frame[7:]


def fix_lz4_header_checksum(payload: bytes) -> bytes:
    """An LZ4 frame with the right header checksum, for a frame written with the broken one (KAFKA-3160, as
    `kafka_lz4_frame` writes it for magic 0), which Kafka's Lz4BlockInputStream reads ignoring it."""
    if len(payload) < 7 or payload[:4] != _LZ4_FRAME_MAGIC:
        return payload
    flags = payload[4]
    end = 6 + (8 if flags & 0x08 else 0) + (4 if flags & 0x01 else 0)  # content size, dictionary id
    if len(payload) <= end:
        return payload
    checksum = (xxh32_short(payload[4:end]) >> 8) & 0xFF
    return payload[:end] + bytes((checksum,)) + payload[end + 1:]
