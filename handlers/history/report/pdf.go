package report

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/projections"
)

// MaxPDFRows bounds each table of the PDF (exceptions, attestations,
// budget days); the JSON and CSV forms list every row.
const MaxPDFRows = 500

// WritePDF renders the report as a PDF. The same report gives the same
// bytes: the document dates are the report's ProducedAt time, the fonts
// are the PDF core fonts (nothing embedded), the charts are PNG images
// drawn by gonum/plot with its built-in fonts, and nothing depends on map
// order or the clock.
func WritePDF(w io.Writer, rep *Report) error {
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetCatalogSort(true)
	pdf.SetCompression(true)
	stamp := rep.ProducedAt.Time
	if stamp.IsZero() {
		stamp = rep.Period.To
	}
	pdf.SetCreationDate(stamp)
	pdf.SetModificationDate(stamp)
	pdf.SetProducer("agentgate", false)
	pdf.SetCreator("agentgate export", false)
	pdf.SetTitle("Compliance report "+rep.Agent.AgentID, true)
	pdf.SetSubject(FormatVersion, false)
	pdf.SetAuthor(rep.Agent.PrincipalID, true)
	pdf.AliasNbPages("{nb}")
	tr := pdf.UnicodeTranslatorFromDescriptor("")
	pdf.SetFooterFunc(func() {
		pdf.SetY(-12)
		pdf.SetFont("Helvetica", "", 8)
		pdf.SetTextColor(110, 110, 110)
		pdf.CellFormat(0, 5, tr(fmt.Sprintf("%s · %s · log seq %d · page %d/{nb}", rep.Agent.AgentID, FormatVersion, rep.ProducedAt.Seq, pdf.PageNo())), "", 0, "C", false, 0, "")
		pdf.SetTextColor(0, 0, 0)
	})
	p := &pdfWriter{pdf: pdf, tr: tr}
	p.cover(rep)
	if err := p.charts(rep); err != nil {
		return err
	}
	p.trust(rep)
	p.budget(rep)
	p.exceptions(rep)
	p.attestations(rep)
	p.a2a(rep)
	p.transactions(rep)
	if err := pdf.Error(); err != nil {
		return fmt.Errorf("rendering PDF: %w", err)
	}
	if err := pdf.Output(w); err != nil {
		return fmt.Errorf("writing PDF: %w", err)
	}
	return nil
}

type pdfWriter struct {
	pdf *fpdf.Fpdf
	tr  func(string) string
}

func (p *pdfWriter) heading(s string) {
	p.pdf.Ln(4)
	p.pdf.SetFont("Helvetica", "B", 13)
	p.pdf.CellFormat(0, 8, p.tr(s), "", 1, "L", false, 0, "")
	p.pdf.SetFont("Helvetica", "", 9)
}

func (p *pdfWriter) text(s string) {
	p.pdf.SetFont("Helvetica", "", 9)
	p.pdf.MultiCell(0, 4.5, p.tr(s), "", "L", false)
}

// pairs renders label/value lines.
func (p *pdfWriter) pairs(kv [][2]string) {
	for _, e := range kv {
		p.pdf.SetFont("Helvetica", "B", 9)
		p.pdf.CellFormat(48, 5.5, p.tr(e[0]), "", 0, "L", false, 0, "")
		p.pdf.SetFont("Helvetica", "", 9)
		p.pdf.MultiCell(0, 5.5, p.tr(e[1]), "", "L", false)
	}
}

// table renders a header and rows with the given column widths (mm),
// repeating the header on each new page.
func (p *pdfWriter) table(widths []float64, head []string, rows [][]string) {
	const h = 5
	header := func() {
		p.pdf.SetFont("Helvetica", "B", 8)
		p.pdf.SetFillColor(225, 230, 240)
		for i, c := range head {
			p.pdf.CellFormat(widths[i], h+1, p.tr(c), "1", 0, "L", true, 0, "")
		}
		p.pdf.Ln(-1)
		p.pdf.SetFont("Helvetica", "", 7.5)
	}
	header()
	_, pageH := p.pdf.GetPageSize()
	for _, r := range rows {
		if p.pdf.GetY()+h > pageH-20 {
			p.pdf.AddPage()
			header()
		}
		for i, c := range r {
			s := p.tr(c)
			for len(s) > 1 && p.pdf.GetStringWidth(s) > widths[i]-1.5 {
				s = s[:len(s)-2] + "~"
			}
			p.pdf.CellFormat(widths[i], h, s, "1", 0, "L", false, 0, "")
		}
		p.pdf.Ln(-1)
	}
}

func fmtTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }

func (p *pdfWriter) cover(rep *Report) {
	p.pdf.AddPage()
	p.pdf.SetFont("Helvetica", "B", 20)
	p.pdf.CellFormat(0, 12, "Compliance report", "", 1, "L", false, 0, "")
	p.pdf.SetFont("Helvetica", "", 10)
	p.pdf.CellFormat(0, 6, p.tr("QWED-Agent audit trail export (QWED-Agent spec v1.1 §7.3), "+FormatVersion), "", 1, "L", false, 0, "")
	p.pdf.Ln(3)
	a := rep.Agent
	p.pairs([][2]string{
		{"Agent", fmt.Sprintf("%s (%s)", a.Name, a.AgentID)},
		{"DID", a.DID},
		{"Type / status", a.Type + " / " + a.Status},
		{"Principal", a.PrincipalID},
		{"Registered", fmtTime(a.RegisteredAt)},
		{"Period", fmtTime(rep.Period.From) + "  to  " + fmtTime(rep.Period.To) + " (end excluded)"},
	})
	p.heading("Produced at")
	pos := rep.ProducedAt
	kv := [][2]string{
		{"Log partition / seq", fmt.Sprintf("%d / %d", pos.Partition, pos.Seq)},
		{"Chain hash at seq", pos.Hash},
		{"Time of that event", fmtTime(pos.Time)},
	}
	if c := pos.Checkpoint; c != nil {
		kv = append(kv,
			[2]string{"Signed checkpoint", fmt.Sprintf("event seq %d covers seq %d", c.EventSeq, c.CoversSeq)},
			[2]string{"Checkpoint head", c.Head},
			[2]string{"Checkpoint time / key", fmtTime(c.Time) + " / " + c.KeyID},
		)
		if c.CoversSeq < pos.Seq {
			kv = append(kv, [2]string{"Not yet signed", fmt.Sprintf("events %d to %d follow the last checkpoint", c.CoversSeq+1, pos.Seq)})
		}
	} else {
		kv = append(kv, [2]string{"Signed checkpoint", "none yet: the position is the log head"})
	}
	p.pairs(kv)
	p.text("Check this report offline: export it as JSON (a bundle with the chain segment, its checkpoints and the JWKS) and run `agentgate audit verify --bundle FILE`.")
	p.heading("Summary")
	s := rep.Summary
	p.table([]float64{30, 24, 24, 24, 24, 32, 30},
		[]string{"actions", "approved", "denied", "corrected", "pending", "budget exceeded", "denial rate"},
		[][]string{{itoa(s.TotalActions), itoa(s.Approved), itoa(s.Denied), itoa(s.Corrected), itoa(s.Pending), itoa(s.BudgetExceeded), s.DenialRate}})
	p.pdf.Ln(2)
	kv = [][2]string{
		{"Cost (USD)", s.TotalCostUSD.String()},
		{"Tokens", itoa(s.TotalTokens)},
		{"Trust level at start", trustName(int(rep.TrustAtStart))},
		{"Trust changes", itoa(int64(len(rep.Trust)))},
		{"Exceptions", itoa(int64(len(rep.Exceptions)))},
		{"Attestations", itoa(int64(len(rep.Attestations)))},
	}
	if len(rep.SandboxViolations) > 0 {
		kv = append(kv, [2]string{"Sandbox violations", itoa(int64(len(rep.SandboxViolations)))})
	}
	if len(rep.PIIViolations) > 0 {
		kv = append(kv, [2]string{"PII in execution outputs", itoa(int64(len(rep.PIIViolations)))})
	}
	p.pairs(kv)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func trustName(n int) string {
	names := []string{"untrusted", "supervised", "autonomous", "trusted"}
	if n >= 0 && n < len(names) {
		return fmt.Sprintf("%d (%s)", n, names[n])
	}
	return strconv.Itoa(n)
}

func (p *pdfWriter) charts(rep *Report) error {
	p.pdf.AddPage()
	p.heading("Decisions per day")
	if len(rep.Days) == 0 {
		p.text("No decisions in the period.")
		return nil
	}
	img, err := decisionsChart(rep.Days)
	if err != nil {
		return err
	}
	p.image("decisions", img, 95)
	p.heading("Denial rate per day")
	img, err = denialChart(rep.Days)
	if err != nil {
		return err
	}
	p.image("denials", img, 80)
	return nil
}

func (p *pdfWriter) image(name string, png []byte, h float64) {
	opts := fpdf.ImageOptions{ImageType: "PNG"}
	p.pdf.RegisterImageOptionsReader(name, opts, bytes.NewReader(png))
	x, y := p.pdf.GetXY()
	p.pdf.ImageOptions(name, x, y, 180, h, false, opts, 0, "")
	p.pdf.SetY(y + h + 2)
}

// dayLabels names the days, keeping at most about 15 labels.
func dayLabels(days []Day) []string {
	step := max(1, (len(days)+14)/15)
	out := make([]string, len(days))
	for i, d := range days {
		if i%step == 0 {
			out[i] = d.Date[5:]
		}
	}
	return out
}

func render(pl *plot.Plot, wmm, hmm float64) ([]byte, error) {
	wt, err := pl.WriterTo(vg.Length(wmm)*vg.Millimeter, vg.Length(hmm)*vg.Millimeter, "png")
	if err != nil {
		return nil, fmt.Errorf("drawing chart: %w", err)
	}
	var b bytes.Buffer
	if _, err := wt.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("drawing chart: %w", err)
	}
	return b.Bytes(), nil
}

func decisionsChart(days []Day) ([]byte, error) {
	pl := plot.New()
	pl.Y.Label.Text = "decisions"
	pl.Y.Min = 0
	series := []struct {
		name string
		get  func(d *Day) int64
		c    color.RGBA
	}{
		{"approved", func(d *Day) int64 { return d.Approved + d.Corrected }, color.RGBA{46, 139, 87, 255}},
		{"pending", func(d *Day) int64 { return d.Pending }, color.RGBA{218, 165, 32, 255}},
		{"denied", func(d *Day) int64 { return d.Denied }, color.RGBA{178, 34, 34, 255}},
		{"budget exceeded", func(d *Day) int64 { return d.BudgetExceeded }, color.RGBA{106, 90, 205, 255}},
	}
	width := vg.Length(150*vg.Millimeter) / vg.Length(len(days)*(len(series)+1))
	width = min(width, 6*vg.Millimeter)
	for i, s := range series {
		vals := make(plotter.Values, len(days))
		for j := range days {
			vals[j] = float64(s.get(&days[j]))
		}
		bars, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return nil, fmt.Errorf("drawing chart: %w", err)
		}
		bars.Color = s.c
		bars.LineStyle.Width = 0
		bars.Offset = vg.Length(float64(i)-float64(len(series)-1)/2) * width
		pl.Add(bars)
		pl.Legend.Add(s.name, bars)
	}
	pl.Legend.Top = true
	pl.NominalX(dayLabels(days)...)
	return render(pl, 180, 95)
}

func denialChart(days []Day) ([]byte, error) {
	pl := plot.New()
	pl.Y.Label.Text = "denied / actions"
	pl.Y.Min, pl.Y.Max = 0, 1
	pts := make(plotter.XYs, len(days))
	for i := range days {
		r, _ := strconv.ParseFloat(days[i].DenialRate, 64)
		if math.IsNaN(r) {
			r = 0
		}
		pts[i] = plotter.XY{X: float64(i), Y: r}
	}
	line, points, err := plotter.NewLinePoints(pts)
	if err != nil {
		return nil, fmt.Errorf("drawing chart: %w", err)
	}
	line.Color = color.RGBA{178, 34, 34, 255}
	points.Shape = draw.CircleGlyph{}
	points.Color = line.Color
	pl.Add(line, points, plotter.NewGrid())
	pl.NominalX(dayLabels(days)...)
	// 2 mm narrower than the decisions chart: fpdf orders images by
	// width alone (SetCatalogSort), so equal widths would leave their
	// order to map iteration.
	return render(pl, 178, 80)
}

func (p *pdfWriter) trust(rep *Report) {
	p.pdf.AddPage()
	p.heading("Trust-level history")
	p.text("Trust level at the start of the period: " + trustName(int(rep.TrustAtStart)) + ".")
	if len(rep.Trust) == 0 {
		p.text("No change during the period.")
		return
	}
	rows := make([][]string, len(rep.Trust))
	for i, t := range rep.Trust {
		rows[i] = []string{itoa(int64(t.Seq)), fmtTime(t.Time), trustName(int(t.From)), trustName(int(t.To)), t.Reason}
	}
	p.table([]float64{16, 34, 28, 28, 84}, []string{"seq", "time", "from", "to", "reason"}, rows)
}

func limitText[T interface{ ~int64 }](used, limit T, show func(T) string) string {
	if limit == 0 {
		return show(used) + " (no limit)"
	}
	return fmt.Sprintf("%s / %s (%d%%)", show(used), show(limit), int64(used)*100/int64(limit))
}

func (p *pdfWriter) budget(rep *Report) {
	p.heading("Budget usage against limits")
	l := rep.Limits
	p.text(fmt.Sprintf("Limits at the end of the period (0: none): daily cost %s USD, per request %s USD, %d requests/hour, %d requests/day, %d tokens/request, %d tokens/day, %d tool calls/hour, %d high-risk calls/day.",
		l.MaxDailyCost, l.MaxPerRequestCost, l.MaxRequestsPerHour, l.MaxRequestsPerDay, l.MaxTokensPerRequest, l.MaxDailyTokens, l.MaxToolCallsPerHour, l.MaxHighRiskCallsDay))
	p.text("Daily usage at the end of each day (reservations of approved and pending actions, corrected by logged executions and released approvals):")
	usd := func(u int64) string { return domain.USD(u).String() }
	cnt := func(n int64) string { return itoa(n) }
	var rows [][]string
	for i, d := range rep.Days {
		if i == MaxPDFRows {
			break
		}
		b := d.Budget
		rows = append(rows, []string{d.Date,
			limitText(int64(b.CostUSD), int64(b.MaxDailyCostUSD), usd),
			limitText(b.Requests, b.MaxRequests, cnt),
			limitText(b.Tokens, b.MaxTokens, cnt),
			limitText(b.HighRiskCalls, b.MaxHighRisk, cnt)})
	}
	p.table([]float64{22, 50, 36, 42, 40}, []string{"day", "cost USD", "requests", "tokens", "high-risk calls"}, rows)
	p.more(len(rep.Days), "days")
}

func (p *pdfWriter) more(n int, what string) {
	if n > MaxPDFRows {
		p.text(fmt.Sprintf("%d more %s: see the JSON or CSV export, which lists all of them.", n-MaxPDFRows, what))
	}
}

func (p *pdfWriter) exceptions(rep *Report) {
	p.pdf.AddPage()
	p.heading("Denied and pending actions")
	if len(rep.Exceptions) == 0 {
		p.text("None in the period.")
		return
	}
	var rows [][]string
	for i, x := range rep.Exceptions {
		if i == MaxPDFRows {
			break
		}
		rows = append(rows, []string{itoa(int64(x.Seq)), fmtTime(x.Time), x.Action, string(x.Decision), string(x.Code), string(x.Approval), x.Message})
	}
	p.table([]float64{12, 31, 24, 26, 40, 16, 41}, []string{"seq", "time", "action", "decision", "code", "approval", "reason"}, rows)
	p.more(len(rep.Exceptions), "exceptions")
}

func (p *pdfWriter) attestations(rep *Report) {
	p.heading("Attestations")
	if len(rep.Attestations) == 0 {
		p.text("None issued in the period.")
		return
	}
	var rows [][]string
	for i, a := range rep.Attestations {
		if i == MaxPDFRows {
			break
		}
		rows = append(rows, []string{itoa(int64(a.Seq)), fmtTime(a.Time), a.ActionID, string(a.Decision), a.KeyID})
	}
	p.table([]float64{14, 34, 50, 26, 66}, []string{"seq", "time", "action", "decision", "key id"}, rows)
	p.more(len(rep.Attestations), "attestations")
}

// a2a renders the agent's A2A verdicts: forwarded against blocked (and
// rate limited, errors) in all, per engine and per pair.
func (p *pdfWriter) a2a(rep *Report) {
	p.heading("Agent-to-agent messages (QWED A2A)")
	x := rep.A2A
	if x == nil {
		p.text("The agent sent no agent-to-agent message in the period.")
		return
	}
	p.pairs([][2]string{
		{"Messages", itoa(x.Total)},
		{"Forwarded", itoa(x.Forwarded)},
		{"Blocked", itoa(x.Blocked)},
		{"Rate limited", itoa(x.RateLimited)},
		{"Errors", itoa(x.Errors)},
	})
	counts := func(c projections.StatusCounts) []string {
		return []string{itoa(c.Forwarded), itoa(c.Blocked), itoa(c.RateLimited), itoa(c.Errors)}
	}
	var rows [][]string
	for _, e := range x.ByEngine {
		rows = append(rows, append([]string{e.Engine}, counts(e.StatusCounts)...))
	}
	p.pdf.Ln(2)
	p.table([]float64{50, 35, 35, 35, 35}, []string{"engine", "forwarded", "blocked", "rate limited", "errors"}, rows)
	rows = rows[:0]
	for i, pr := range x.Pairs {
		if i == MaxPDFRows {
			break
		}
		rows = append(rows, append([]string{pr.Sender, pr.Receiver}, counts(pr.StatusCounts)...))
	}
	p.pdf.Ln(2)
	p.table([]float64{45, 45, 25, 25, 25, 25}, []string{"sender", "receiver", "forwarded", "blocked", "rate limited", "errors"}, rows)
	p.more(len(x.Pairs), "pairs")
	if o := x.OtherPairs; o.Total() > 0 {
		p.text(fmt.Sprintf("Pairs past the first %d: %d forwarded, %d blocked, %d rate limited, %d errors.",
			projections.MaxA2APairsPerPrincipal, o.Forwarded, o.Blocked, o.RateLimited, o.Errors))
	}
}

// transactions renders the agent's executes: totals by currency and
// status, then the transactions one by one.
func (p *pdfWriter) transactions(rep *Report) {
	p.heading("Executes through the gate (transactions)")
	x := rep.Transactions
	if x == nil {
		p.text("The agent made no execute in the period.")
		return
	}
	p.pairs([][2]string{{"Transactions", itoa(x.Totals.Count)}})
	var rows [][]string
	for _, a := range x.Totals.Amounts {
		rows = append(rows, []string{a.Currency, itoa(a.SpentCents), itoa(a.PendingCents), itoa(a.RefusedCents)})
	}
	p.pdf.Ln(2)
	p.table([]float64{30, 50, 50, 50}, []string{"currency", "spent (minor units)", "pending", "refused"}, rows)
	rows = rows[:0]
	for i, t := range x.List {
		if i == MaxPDFRows {
			break
		}
		rows = append(rows, []string{itoa(int64(t.Seq)), t.CreatedAt.Format(time.RFC3339), t.ID, t.BusinessID,
			itoa(t.AmountCents) + " " + t.Currency, t.Status})
	}
	p.pdf.Ln(2)
	p.table([]float64{14, 34, 44, 30, 28, 30}, []string{"seq", "time", "transaction", "business", "amount", "status"}, rows)
	p.more(len(x.List), "transactions")
}
