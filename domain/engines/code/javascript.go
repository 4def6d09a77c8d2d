package code

func analyseJS(p *parsed, rep *reporter, quality bool, budget *int) (map[string]string, error) {
	return nil, nil
}
