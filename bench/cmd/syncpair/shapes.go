package main

import (
	"maps"
	"slices"

	"github.com/listwatch/informer/bench/scale"
)

// shapes are the shapes -shape takes, and each one's variants.
var shapes = map[string]map[string]variant{
	scale.ConfigMaps: configMapVariants,
	scale.Widgets:    widgetVariants,
}

// variantsOf is shape's variants, or nil for a shape syncpair lacks.
func variantsOf(shape string) map[string]variant { return shapes[shape] }

// variantNames is shape's variants' names, sorted.
func variantNames(shape string) []string { return slices.Sorted(maps.Keys(variantsOf(shape))) }

// shapeNames is the shapes -shape takes, sorted.
func shapeNames() []string { return slices.Sorted(maps.Keys(shapes)) }
