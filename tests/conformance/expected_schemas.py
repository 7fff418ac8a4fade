"""The schema each fixture file must infer to, written by reading the files (and their Debezium schemas)."""

from __future__ import annotations

PRODUCTS = {"id": "BIGINT", "name": "STRING", "description": "STRING", "weight": "DOUBLE"}

_ALL_TYPES = {
    "_id": "BIGINT", "pt": "DECIMAL(2,1)", "_bit1": "BOOLEAN", "_bit": "BINARY",
    **dict.fromkeys(["_tinyint1", "_boolean", "_bool", "_tinyint", "_tinyint_unsigned", "_tinyint_unsigned_zerofill",
                     "_smallint", "_smallint_unsigned", "_smallint_unsigned_zerofill", "_mediumint",
                     "_mediumint_unsigned", "_mediumint_unsigned_zerofill", "_int", "_int_unsigned",
                     "_int_unsigned_zerofill", "_bigint"], "BIGINT"),
    # Connect Decimal without connect.decimal.precision: the widest DECIMAL with the stated scale
    **dict.fromkeys(["_bigint_unsigned", "_bigint_unsigned_zerofill", "_serial"], "DECIMAL(38,0)"),
    **dict.fromkeys(["_float", "_float_unsigned", "_float_unsigned_zerofill", "_real", "_real_unsigned",
                     "_real_unsigned_zerofill", "_double", "_double_unsigned", "_double_unsigned_zerofill",
                     "_double_precision", "_double_precision_unsigned", "_double_precision_unsigned_zerofill"],
                    "DOUBLE"),
    **dict.fromkeys(["_numeric", "_numeric_unsigned", "_numeric_unsigned_zerofill"], "DECIMAL(8,3)"),
    # precision 40 > 38: only text keeps these exact
    **dict.fromkeys(["_fixed", "_fixed_unsigned", "_fixed_unsigned_zerofill"], "STRING"),
    **dict.fromkeys(["_decimal", "_decimal_unsigned", "_decimal_unsigned_zerofill"], "DECIMAL(8,0)"),
    "_big_decimal": "DECIMAL(38,10)", "_date": "DATE",
    **dict.fromkeys(["_datetime", "_datetime3", "_datetime6", "_datetime_p", "_datetime_p2"], "TIMESTAMP"),
    "_timestamp": "TIMESTAMP_LTZ", "_timestamp0": "TIMESTAMP_LTZ",
    **dict.fromkeys(["_char", "_varchar", "_tinytext", "_text", "_mediumtext", "_longtext"], "STRING"),
    **dict.fromkeys(["_bin", "_varbin", "_tinyblob", "_blob", "_mediumblob", "_longblob"], "BINARY"),
    "_json": "STRING", "_enum": "STRING", "_year": "BIGINT", "_time": "TIME",
    **dict.fromkeys(["_point", "_geometry", "_linestring", "_polygon", "_multipoint", "_multiline", "_multipolygon",
                     "_geometrycollection"], "STRING"),
    "_set": "STRING",
}

# file → (table, primary key, {column: type}, NOT NULL columns)
EXPECTED = {
    "canal.txt": ("inventory.products2", ["id"], PRODUCTS, set(PRODUCTS)),
    "maxwell.txt": ("test.product", ["id"], PRODUCTS, set(PRODUCTS)),
    # the envelope says which columns are optional, whatever the sample shows
    "debezium-mysql-with-schema.txt": ("inventory.products", None, PRODUCTS, {"id", "name"}),
    # weight is 1 (an integer) in one message and a fraction elsewhere: DOUBLE
    "debezium-mysql-no-schema.txt": ("inventory.products", None,
                                     {"id": "BIGINT", "ts": "BIGINT", "name": "STRING", "description": "STRING",
                                      "weight": "DOUBLE"}, {"id", "ts", "name", "description", "weight"}),
    "debezium-postgres-no-schema.txt": ("postgres.inventory.products", None, PRODUCTS, set(PRODUCTS)),
    "debezium-mysql-all-types-with-schema.txt": ("paimon_sync_table.all_types_table", None, _ALL_TYPES,
                                                 {"_id", "_serial"}),
}
