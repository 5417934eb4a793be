package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/cosci-dev/cosci/internal/sandbox"
)

// The child's own check, the second layer: it holds even where the parent's guard missed
// something, because it reads the query as DuckDB itself does.
//
//  1. json_serialize_sql parses the query (nothing is bound or run) and serializes only
//     SELECT statements: the tree must hold exactly one, name no denied function (the
//     guard's list, sandbox.DeniedFunction) and read no table but the loaded ones and the
//     query's own CTEs (FROM '/etc/passwd' is a table named '/etc/passwd' here).
//  2. The statement is prepared on its own (the driver's Prepare refuses a text of more
//     than one statement without running any: PrepareContext would run all but the
//     last), and its type must be SELECT.
//
// Binding the statement in step 2 can run a table function (enable_logging does its work
// at bind time), which is why the tree is read first.
func check(ctx context.Context, conn *sql.Conn, query string, inputs []sandbox.ChildInput) error {
	var tree string
	if err := conn.QueryRowContext(ctx, "SELECT json_serialize_sql(?::VARCHAR)::VARCHAR", query).Scan(&tree); err != nil {
		return err
	}
	if err := checkTree(tree, inputs); err != nil {
		return err
	}
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*duckdb.Conn)
		if !ok {
			return errors.New("not a DuckDB connection")
		}
		s, err := c.Prepare(query)
		if err != nil {
			if strings.Contains(err.Error(), "multi-statement") {
				return refusal(sandbox.ReasonStatement, "only one statement may run")
			}
			return err
		}
		defer s.Close()
		st, ok := s.(*duckdb.Stmt)
		if !ok {
			return errors.New("not a DuckDB statement")
		}
		typ, err := st.StatementType()
		if err != nil {
			return err
		}
		if typ != duckdb.STATEMENT_TYPE_SELECT {
			return refusal(sandbox.ReasonStatement, "DuckDB reads it as a statement other than a query: only one read-only query may run")
		}
		return nil
	})
}

// checkTree reads json_serialize_sql's answer.
func checkTree(tree string, inputs []sandbox.ChildInput) error {
	var doc struct {
		Error        bool             `json:"error"`
		ErrorType    string           `json:"error_type"`
		ErrorMessage string           `json:"error_message"`
		Statements   []map[string]any `json:"statements"`
	}
	if err := json.Unmarshal([]byte(tree), &doc); err != nil {
		return refusal(sandbox.ReasonParse, "DuckDB's parse tree of the query could not be read")
	}
	switch {
	case doc.Error && doc.ErrorType == "parser":
		return refusal(sandbox.ReasonParse, "DuckDB cannot parse the query: "+scrubParse(doc.ErrorMessage))
	case doc.Error:
		return refusal(sandbox.ReasonStatement, "DuckDB reads it as a statement other than a query: only one read-only query may run")
	case len(doc.Statements) != 1:
		return refusal(sandbox.ReasonStatement, "only one statement may run")
	}
	tables := map[string]bool{}
	for _, in := range inputs {
		tables[strings.ToLower(in.Table)] = true
	}
	collectCTEs(doc.Statements[0], tables)
	return walk(doc.Statements[0], tables)
}

// collectCTEs adds the names every WITH clause in the tree defines.
func collectCTEs(v any, tables map[string]bool) {
	switch n := v.(type) {
	case map[string]any:
		if m, ok := n["cte_map"].(map[string]any); ok {
			if list, ok := m["map"].([]any); ok {
				for _, e := range list {
					if kv, ok := e.(map[string]any); ok {
						if k, ok := kv["key"].(string); ok {
							tables[strings.ToLower(k)] = true
						}
					}
				}
			}
		}
		for _, c := range n {
			collectCTEs(c, tables)
		}
	case []any:
		for _, c := range n {
			collectCTEs(c, tables)
		}
	}
}

// walk refuses a denied function or a table that is not loaded, anywhere in the tree.
func walk(v any, tables map[string]bool) error {
	switch n := v.(type) {
	case map[string]any:
		if name, ok := n["function_name"].(string); ok {
			if r, denied := sandbox.DeniedFunction(name); denied {
				return refusal(r, "the query calls "+name+", which the sandbox does not allow")
			}
		}
		if n["type"] == "BASE_TABLE" {
			name, _ := n["table_name"].(string)
			catalog, _ := n["catalog_name"].(string)
			schema, _ := n["schema_name"].(string)
			if !tables[strings.ToLower(name)] || catalog != "" && catalog != "memory" || schema != "" && schema != "main" {
				return refusal(sandbox.ReasonFile, "the query reads a table that is not one of the loaded inputs: only they may be read")
			}
		}
		for _, c := range n {
			if err := walk(c, tables); err != nil {
				return err
			}
		}
	case []any:
		for _, c := range n {
			if err := walk(c, tables); err != nil {
				return err
			}
		}
	}
	return nil
}
