"""All SQL of an index file, one named function per statement; callers use `sql.<name>` from here."""

from __future__ import annotations

from indexer.index.sql.schema import (  # noqa: F401
    has_schema, init_schema, read_meta, write_meta, has_vec_table, create_vec_table, identity_problems,
    check_identity, bind_identity, provider_of, SCHEMA_VERSION, vectors_pending, set_vectors_pending,
)
from indexer.index.sql.records import (  # noqa: F401
    get_document, all_documents, put_document, chunks_for_uri, vector_for_id, vector_for_hash, insert_chunk,
    delete_chunk, put_vector, move_chunk, update_chunk_meta, meta_differs, hashes_for_uri, delete_by_uri,
    hashes_missing_vectors, fill_vectors, vectors_by_hash, counters_by_uri_hash, restore_counters, skipped_notes,
    put_skipped_notes,
)
from indexer.index.sql.queries import (  # noqa: F401
    has_spaces, fts_search, vector_search, ids_passing, any_dated, dated_chunks, count_where, vec_rowids_where, find_similar, vectors_with_uri,
    chunk_exists, chunks_by_ids, chunks_holding, KNN_MAX,
)
from indexer.index.sql.text_stats import (  # noqa: F401
    chunk_count, term_doc_counts, term_doc_count_upto, phrase_doc_counts, content_terms,
)
from indexer.index.sql.counters import (  # noqa: F401
    increment_reinforcement, increment_access_count, carry_counters, newest_chunks, memories_by_space, get_stats,
    status_counts,
    dynamics_inputs, set_strengths, set_chunk_times, chunk_strengths, document_uris, uris_without_document,
    delete_orphan_vectors, fts_optimize, fts_optimize_after_bulk, vec_version, wal_checkpoint,
)
from indexer.index.sql.aliases import (  # noqa: F401
    add_alias, resolve_alias, all_aliases, restore_aliases, prune_aliases, ids_naming, memories_mentioning,
)
from indexer.index.sql.checks import (  # noqa: F401
    chunk_uris, vec_table_dimension, orphan_vector_ids, chunks_without_vector, vectors_of_wrong_length,
    chunks_missing_fts, fts_orphan_rowids, fts_integrity_problem, rebuild_fts, delete_vectors,
    delete_document, delete_chunk_rows, vector_signature, vectors_after, all_vectors_with_rowid,
    vector_rowids, vectors_for_ids,
)
from indexer.index.sql.vec_rowids import (  # noqa: F401
    ids_for_rowids, rowids_for_ids, vector_count_between, vector_rowids_between,
)
from indexer.index.sql.fts_rows import (  # noqa: F401
    fts_totals, fts_structure, row_lengths, row_lengths_for, terms_in_rows, term_rows, fts_rowid_top, fts_rows_after,
    fts_rows_among, hashes_for_fts_rowids, fts_rowids_passing, fts_rowids_where,
)
from indexer.index.sql.removals import removal_seq, removals_since, trim_removals  # noqa: F401
from indexer.index.sql.fts_topk import all_scores, phrases_of  # noqa: F401
from indexer.index.sql.ranking_vectors import (  # noqa: F401
    has_e5_table, bind_e5, e5_missing, put_e5, e5_vectors, e5_vectors_of_chunks, e5_all, e5_progress,
    delete_orphan_e5,
)
