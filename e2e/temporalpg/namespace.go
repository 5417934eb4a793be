package temporalpg

// The namespace the server serves and the search attributes registered on it.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/protobuf/types/known/durationpb"
)

// setUpNamespace registers namespace "default" unless it exists, then the search attributes
// the namespace lacks, and waits until the server lists them all.
func (s *Server) setUpNamespace(ctx context.Context, types map[string]enumspb.IndexedValueType) error {
	c, err := s.dial(ctx, Namespace)
	if err != nil {
		return fmt.Errorf("temporalpg: %w", err)
	}
	defer c.Close()
	ws := c.WorkflowService()
	if _, err := ws.DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: Namespace}); err != nil {
		var notFound *serviceerror.NamespaceNotFound
		if !errors.As(err, &notFound) {
			return fmt.Errorf("temporalpg: describe namespace %s: %w", Namespace, err)
		}
		_, err := ws.RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
			Namespace:                        Namespace,
			WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour),
		})
		var exists *serviceerror.NamespaceAlreadyExists
		if err != nil && !errors.As(err, &exists) {
			return fmt.Errorf("temporalpg: register namespace %s: %w", Namespace, err)
		}
	}
	if err := s.waitNamespace(ctx); err != nil {
		return err
	}

	ops := c.OperatorService()
	missing := func() (map[string]enumspb.IndexedValueType, error) {
		resp, err := ops.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: Namespace})
		if err != nil {
			return nil, err
		}
		out := map[string]enumspb.IndexedValueType{}
		for name, typ := range types {
			have, ok := resp.GetCustomAttributes()[name]
			if !ok {
				out[name] = typ
			} else if have != typ {
				return nil, serviceerror.NewInvalidArgumentf("search attribute %s is registered as %s, not %s", name, have, typ)
			}
		}
		return out, nil
	}
	for {
		want, err := missing()
		if err == nil && len(want) == 0 {
			return nil
		}
		if err == nil {
			_, err = ops.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
				Namespace:        Namespace,
				SearchAttributes: want,
			})
			var exists *serviceerror.AlreadyExists
			if errors.As(err, &exists) {
				err = nil
			}
		}
		var invalid *serviceerror.InvalidArgument // a wrong type, or too many of one type for SQL visibility
		if errors.As(err, &invalid) {
			return fmt.Errorf("temporalpg: register search attributes %v: %w", slices.Sorted(maps.Keys(types)), err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("temporalpg: the search attributes did not appear: %w (last error: %v)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitNamespace waits until the frontend describes namespace "default" (the namespace
// registry refreshes from the database every few seconds).
func (s *Server) waitNamespace(ctx context.Context) error {
	c, err := s.dial(ctx, Namespace)
	if err != nil {
		return fmt.Errorf("temporalpg: %w", err)
	}
	defer c.Close()
	for {
		_, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: Namespace})
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("temporalpg: namespace %s did not answer: %w (last error: %v)", Namespace, ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// indexedValueTypes maps search attribute types by name ("Keyword") to the API's enum.
func indexedValueTypes(attrs map[string]string) (map[string]enumspb.IndexedValueType, error) {
	out := make(map[string]enumspb.IndexedValueType, len(attrs))
	for name, typ := range attrs {
		v, err := enumspb.IndexedValueTypeFromString(typ)
		if err != nil || v == enumspb.INDEXED_VALUE_TYPE_UNSPECIFIED {
			return nil, fmt.Errorf("temporalpg: search attribute %s has type %q; want Keyword, Int, Double, Text, Bool, Datetime or KeywordList", name, typ)
		}
		out[name] = v
	}
	return out, nil
}
