package stats

import (
	"math/big"
	"slices"
)

// numbers reads the numeric values of column col on rows, skipping missing
// cells; a cell that is not a decimal number makes the claim undecided.
func numbers(t *Table, col int, rows []int) ([]*big.Rat, *undecided) {
	out := make([]*big.Rat, 0, len(rows))
	for _, r := range rows {
		cell := t.Rows[r][col]
		if missing(cell) {
			continue
		}
		v, _, ok := ParseDecimal(cell)
		if !ok {
			return nil, undecidedf("row %d: column %q value %q is not a decimal number", r+1, t.Header[col], cell)
		}
		out = append(out, v)
	}
	return out, nil
}

// compute evaluates the claim's statistic on rows: the value, how many
// values it used, or why it is undefined.
func compute(t *Table, s settings, c Claim, rows []int) (quantity, int, *undecided) {
	if c.Func == "count" && len(c.Columns) == 0 {
		return ratQ(big.NewRat(int64(len(rows)), 1)), len(rows), nil
	}
	cols := make([]int, len(c.Columns))
	for i, name := range c.Columns {
		ci, ok := t.column(name)
		if !ok {
			return quantity{}, 0, unknownColumn(t, name)
		}
		cols[i] = ci
	}
	if c.Func == "count" {
		n := 0
		for _, r := range rows {
			if !missing(t.Rows[r][cols[0]]) {
				n++
			}
		}
		return ratQ(big.NewRat(int64(n), 1)), n, nil
	}
	if c.Func == "correlation" {
		return correlation(t, cols[0], cols[1], rows)
	}
	xs, u := numbers(t, cols[0], rows)
	if u != nil {
		return quantity{}, 0, u
	}
	n := len(xs)
	if n == 0 {
		if c.Func == "sum" {
			return ratQ(new(big.Rat)), 0, nil
		}
		return quantity{}, 0, undecidedf("column %q has no values in the selected rows", c.Columns[0])
	}
	switch c.Func {
	case "sum":
		return ratQ(sum(xs)), n, nil
	case "mean":
		return ratQ(new(big.Rat).Quo(sum(xs), big.NewRat(int64(n), 1))), n, nil
	case "min", "max":
		m := xs[0]
		for _, x := range xs[1:] {
			if k := x.Cmp(m); (c.Func == "min" && k < 0) || (c.Func == "max" && k > 0) {
				m = x
			}
		}
		return ratQ(new(big.Rat).Set(m)), n, nil
	case "median", "percentile":
		return ratQ(percentile(xs, c.Pct)), n, nil
	case "variance", "std":
		v, u := variance(xs, s.population)
		if u != nil {
			return quantity{}, n, u
		}
		if c.Func == "variance" {
			return ratQ(v), n, nil
		}
		return rootQ(v.Sign(), v), n, nil
	}
	return quantity{}, n, undecidedf("unknown statistic %q", c.Func)
}

func sum(xs []*big.Rat) *big.Rat {
	s := new(big.Rat)
	for _, x := range xs {
		s.Add(s, x)
	}
	return s
}

// percentile is the R-7 (linear interpolation) percentile p in [0, 1] of
// xs: h = (n-1)p, x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]).
// For p = 1/2 it is the usual median. It sorts a copy of xs.
func percentile(xs []*big.Rat, p *big.Rat) *big.Rat {
	s := slices.Clone(xs)
	slices.SortFunc(s, func(a, b *big.Rat) int { return a.Cmp(b) })
	h := new(big.Rat).Mul(big.NewRat(int64(len(s)-1), 1), p)
	lo := new(big.Int).Quo(h.Num(), h.Denom()) // floor, h >= 0
	i := int(lo.Int64())
	frac := new(big.Rat).Sub(h, new(big.Rat).SetInt(lo))
	out := new(big.Rat).Set(s[i])
	if frac.Sign() > 0 && i+1 < len(s) {
		d := new(big.Rat).Sub(s[i+1], s[i])
		out.Add(out, d.Mul(d, frac))
	}
	return out
}

// variance is sum((x - mean)^2) / (n - 1) (sample) or / n (population).
func variance(xs []*big.Rat, population bool) (*big.Rat, *undecided) {
	n := len(xs)
	den := n - 1
	if population {
		den = n
	}
	if den < 1 {
		return nil, undecidedf("the sample variance needs at least 2 values, there is %d", n)
	}
	mean := new(big.Rat).Quo(sum(xs), big.NewRat(int64(n), 1))
	ss := new(big.Rat)
	d := new(big.Rat)
	for _, x := range xs {
		d.Sub(x, mean)
		ss.Add(ss, new(big.Rat).Mul(d, d))
	}
	return ss.Quo(ss, big.NewRat(int64(den), 1)), nil
}

// correlation is Pearson's r over the rows where both cells are present.
func correlation(t *Table, cx, cy int, rows []int) (quantity, int, *undecided) {
	var xs, ys []*big.Rat
	for _, r := range rows {
		a, b := t.Rows[r][cx], t.Rows[r][cy]
		if missing(a) || missing(b) {
			continue
		}
		x, _, okx := ParseDecimal(a)
		y, _, oky := ParseDecimal(b)
		if !okx {
			return quantity{}, 0, undecidedf("row %d: column %q value %q is not a decimal number", r+1, t.Header[cx], a)
		}
		if !oky {
			return quantity{}, 0, undecidedf("row %d: column %q value %q is not a decimal number", r+1, t.Header[cy], b)
		}
		xs, ys = append(xs, x), append(ys, y)
	}
	n := len(xs)
	if n < 2 {
		return quantity{}, n, undecidedf("the correlation needs at least 2 rows with both values, there are %d", n)
	}
	nr := big.NewRat(int64(n), 1)
	mx := new(big.Rat).Quo(sum(xs), nr)
	my := new(big.Rat).Quo(sum(ys), nr)
	sxx, syy, sxy := new(big.Rat), new(big.Rat), new(big.Rat)
	dx, dy := new(big.Rat), new(big.Rat)
	for i := range xs {
		dx.Sub(xs[i], mx)
		dy.Sub(ys[i], my)
		sxx.Add(sxx, new(big.Rat).Mul(dx, dx))
		syy.Add(syy, new(big.Rat).Mul(dy, dy))
		sxy.Add(sxy, new(big.Rat).Mul(dx, dy))
	}
	if sxx.Sign() == 0 || syy.Sign() == 0 {
		return quantity{}, n, undecidedf("the correlation is undefined: a column is constant")
	}
	r2 := new(big.Rat).Mul(sxy, sxy)
	r2.Quo(r2, new(big.Rat).Mul(sxx, syy))
	return rootQ(sxy.Sign(), r2), n, nil
}
