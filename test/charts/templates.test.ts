import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { CHART, templateFiles } from './chart.ts';
import { templateSyntaxErrors } from './template-syntax.ts';

describe('chart templates: syntax', () => {
  for (const file of templateFiles()) {
    it(`templates/${basename(file)} has balanced {{ }} and if/range/with/define ... end`, () => {
      expect(templateSyntaxErrors(readFileSync(file, 'utf8'))).to.deep.equal([]);
    });
  }
});

describe('chart templates: the syntax check itself', () => {
  it('passes a balanced template with strings, comments and else', () => {
    const text = '{{- /* a comment with }} inside */ -}}\n{{ if .a }}x: "{{ "}}" }}"{{ else if .b }}y{{ else }}z{{ end }}\n{{ range .l }}{{ with . }}{{ . }}{{ end }}{{ end }}';
    expect(templateSyntaxErrors(text)).to.deep.equal([]);
  });

  it('finds an if without its end, with its line', () => {
    expect(templateSyntaxErrors('a: 1\n{{- if .Values.x }}\nb: 2\n')).to.deep.equal(['line 2: "if" has no "end"']);
  });

  it('finds an end without an opener', () => {
    expect(templateSyntaxErrors('{{ .x }}\n{{ end }}')).to.deep.equal(['line 2: "end" without an opening if/range/with/define']);
  });

  it('finds an action that is never closed', () => {
    expect(templateSyntaxErrors('a: {{ .Values.x\nb: 2')).to.deep.equal(['line 1: "{{" without "}}"']);
  });

  it('finds a stray }}', () => {
    expect(templateSyntaxErrors('a: .Values.x }}')).to.deep.equal(['line 1: "}}" without "{{"']);
  });

  it('finds a define nested in an if, which Go templates refuse', () => {
    expect(templateSyntaxErrors('{{ if .a }}\n{{ define "x" }}{{ end }}\n{{ end }}')[0]).to.match(/^line 2: "define" inside "if"/);
  });
});

describe('chart templates: the monitoring files of the observability issue', () => {
  // The rules and dashboard are tested where they live (test/observability); the chart must ship
  // those very files, not copies that could drift.
  it('the PrometheusRule carries files/prometheus-rules.yaml', () => {
    expect(readFileSync(`${CHART}templates/prometheusrule.yaml`, 'utf8')).to.include('.Files.Get "files/prometheus-rules.yaml"');
  });

  it('the dashboard ConfigMap carries files/grafana-dashboard.json with the grafana_dashboard label', () => {
    const template = readFileSync(`${CHART}templates/dashboard-configmap.yaml`, 'utf8');
    expect(template).to.include('.Files.Get "files/grafana-dashboard.json"');
    expect(template).to.match(/^\s+grafana_dashboard: "1"$/m);
  });

  it('the promtool unit tests stay out of the packaged chart (.helmignore)', () => {
    expect(readFileSync(`${CHART}.helmignore`, 'utf8').split('\n')).to.include('files/prometheus-rules.test.yaml');
  });
});
