package main

func init() {
	banks["pt"] = &bank{
		core: map[string][]string{
			"interested": {
				"Ok, vamos falar.", "Sim, vamos encontrar um horário.", "Claro, ligue-me.", "Seria ótimo, vamos marcar.", "Vejo com gosto, terça à tarde estou livre.", "Para uma chamada curta estou disponível.", "Sim, tenho interesse. Que horários lhe dão jeito?", "Bom, envie um convite e eu entro.", "Mostre-me o que faz.", "Muito interessante, podemos falar {day}?",
				"Parece interessante, vamos marcar uma chamada.", "Sim, claro. Pode ser {day} às {time}?", "Mande-me um convite para {day}.",
				"Bom timing, estamos a avaliar isto. Quando está disponível?", "Não diria não a uma demo.",
				"É exatamente o que procuramos. Pode mostrar-me {day}?", "Marque um horário aqui: {link}", "Perfeito, {day} à tarde estou livre.",
				"Estou aberto a uma conversa rápida.", "Com gosto, uma demonstração para a equipa.", "Interessante! Falamos {day}?",
				"Ok, fiquei curioso. Meia hora {day}?", "Ligue-me {day} para o {phone}.", "Sim, vamos agendar uma reunião.",
				"Pode ser-nos útil. Quando pode?", "Convide também o {colleague}, por favor.", "Gostava de saber mais, envie-me um convite.",
				"{day} às {time} dá-me jeito.", "Não é que não tenhamos interesse, falamos {day}.", "Porque não? Mostre-me o que faz.",
				"O nosso contrato com a {tool} acaba em breve, por isso vamos conversar.", "Claro, marcamos uma call no Teams.", "Bora conversar! Que dia dá?",
				"Sim, uma demo seria útil.",
			},
			"question": {
				"Quanto custa?", "Têm referências com quem eu possa falar?", "Como funciona a faturação?", "Há fidelização ou posso cancelar quando quiser?", "Pode enviar mais detalhes por e-mail?", "Com que CRMs trabalham?", "Em quanto tempo fica operacional?",
				"Quanto custa para uma equipa de {n} pessoas?", "Integra com {tool}?", "Onde ficam os dados?", "Há um período de teste gratuito?",
				"Pode enviar mais informações?", "Qual a diferença para o {tool}?", "Quanto tempo demora a implementação?", "Cumpre o RGPD?",
				"Têm clientes no setor de {industry}?", "Quais são os preços?", "Há fidelização mínima?", "O preço é por utilizador ou por caixa de correio?",
				"Há custos de ativação?", "Funciona também com mensagens do LinkedIn?", "Têm API?", "O suporte está incluído?", "Existe versão em português?",
				"Podemos testar primeiro com uma equipa?", "Pode mandar uma tabela de preços?", "Os servidores estão na Europa?", "Como reconhece as respostas?",
				"Dá para cancelar mensalmente?", "O que acontece aos nossos dados se cancelarmos?",
			},
			"not_now": {
				"Agora não, talvez daqui a uns meses.", "Pergunte-me no próximo ano.", "Volte a contactar-me em {month}.", "Estamos muito ocupados, tente em {season}.", "Para já não, talvez mais para o fim do ano.",
				"Agora não, fale comigo em {season}.", "Sem orçamento este ano, talvez no próximo.", "Mau momento, volte a contactar em {month}.",
				"Não antes de {month}, estamos cheios.", "Neste momento não é prioridade, talvez mais à frente.", "Estamos numa reestruturação. Escreva-me em {month}.",
				"Ainda é cedo para nós, falamos em {season}.", "Este trimestre não, talvez no próximo.", "Estamos presos à {tool} até {month}.",
				"Agora não temos tempo, tente daqui a {n} meses.", "Depois das festas falamos.", "Agora não, mais tarde talvez.",
				"O orçamento acabou. No próximo ano vemos isso.", "Volte a falar comigo depois do verão.", "Até {month} temos outras prioridades.",
			},
			"not_interested": {
				"Não precisamos disto, obrigado.", "Por favor não me escreva mais.", "Estamos bem assim, obrigado.", "Não é para nós, desculpe.", "Obrigado, mas não.", "Não estou interessado.", "Sem orçamento e sem interesse.", "Retirem-me, por favor.", "Não contactem mais a nossa equipa.", "Não usamos este tipo de ferramentas.",
				"Não tenho interesse, obrigado.", "Não, obrigado.", "Por favor, retire-me da lista.", "Já usamos {tool} e estamos satisfeitos.", "Não é para nós.",
				"Pare de me enviar e-mails.", "Não precisamos disto.", "Fazemos isso internamente, por isso não.", "Apaguem os meus dados, por favor.",
				"Já temos uma solução.", "Não quero voltar a ser contactado.", "Isto não é para nós.", "Escolhemos outro fornecedor.",
				"Mais um e-mail comercial... Não.", "Chega de e-mails, obrigado.", "Não.", "Não estamos interessados.", "Cancelem a minha subscrição.",
				"Não vamos avançar.", "Não é relevante para a nossa empresa.",
			},
			"ooo": {
				"Estou fora do escritório até {date} com acesso limitado ao e-mail.", "Obrigado pela mensagem. Estou de férias até {date}. Para urgências: {email}.",
				"Estou ausente até {date}.", "Estou de licença até {date}. O seu e-mail não será reencaminhado.", "Estou de baixa e responderei quando regressar.",
				"Estou em viagem e regresso a {date}.", "O escritório está fechado até {date}.", "Estou de licença de maternidade até {date}.",
			},
			"wrong_person": {
				"Não sou o contacto certo, fale com o nosso diretor comercial.", "Já não é a minha função, mudei de departamento em {month}.", "Contacte antes {colleague}, que trata das parcerias.", "Quem decide estas ferramentas é o departamento de compras.", "Sou só o assistente, quem decide é {colleague}.", "Não estou na equipa comercial. Tente {email}.", "Isso é uma pergunta para o nosso CTO, não para mim.", "Vou sair da {co} no fim do mês, contacte {colleague}.", "Deve estar a falar do meu colega {colleague}.", "Agora trabalho noutra empresa.",
				"Não sou a pessoa certa, fale com {colleague}.", "Já não trabalho na {co}. Escreva para {email}.", "Não é a minha área, quem decide são as compras.",
				"Interessante, mas quem decide é {colleague}, não eu.", "Para isso tem de falar com {colleague}.", "Reencaminhei a sua mensagem para {colleague}, é ela que trata disso.",
				"Trabalho em {dept}, não em vendas. Tente {colleague}.", "Já não faço parte da empresa.", "O meu substituto é {colleague} ({email}).",
				"Não decido eu, é a direção.", "Sou só estagiário, escreva para {email}.", "Pessoa errada, desculpe. Tente o nosso diretor comercial.",
				"Estou reformado desde {month}.", "{colleague} ficou com as minhas funções.", "Isso é com o marketing, não comigo.",
			},
			"unclear": {
				"Obrigado pelo pedido de ligação.", "Prazer em ligar-me consigo.", "O que é isto?", "O que quer dizer exatamente?", "Não percebo bem o que oferecem.", "Lembra-me de onde nos conhecemos?", "É um e-mail em massa?", "Obrigado, vou passar.", "Talvez.", "Bom fim de semana!", "Vou falar com o meu chefe.", "Onde estão sediados?", "Hoje não tenho tempo, leio depois.", "Quem lhe deu o meu nome?", "Vou ver com calma.", "Ok, obrigado pela mensagem.", "Tomei nota.", "Bom saber.",
				"Obrigado!", "Quem é?", "Ok.", "Vou encaminhar internamente.", "Recebido.", "Do que se trata?", "Obrigado pela info.", "Conhecemo-nos?",
				"Vou pensar.", "Vou falar com a equipa.", "Está bem.", "Vamos ver.", "Como arranjou o meu número?", "Onde encontrou o meu endereço?",
				"Interessante.", "Depois digo algo.", "Boas festas!", "Feliz ano novo!", "Hmm.", "Visto.", "Obrigado pela ligação!",
				"De que empresa é mesmo?", "Isto é uma mensagem automática?", "Vou dar uma olhadela.",
			},
		},
		parts: map[string][][]string{
			"interested": {
				{"", "Interessante.", "Bom timing.", "Interessa-me.", "Sim,", "Com gosto,"},
				{"falamos {day}?", "pode ser {day} às {time}?", "mande-me um convite.", "marque aqui: {link}", "mostre-me uma demo.", "posso {day} ou {day2}."},
			},
			"question": {
				{"", "Uma pergunta:", "Antes de mais:", "Obrigado. Pergunta:"},
				{"quanto custa para {n} utilizadores?", "integra com {tool}?", "onde ficam os dados?", "há período de teste?", "qual a fidelização mínima?"},
			},
			"not_now": {
				{"", "Obrigado, mas", "Interessante, mas", "Boa ideia, mas"},
				{"estamos cheios de trabalho", "o orçamento acabou", "estamos numa reestruturação", "agora não é prioridade"},
				{"— fale comigo em {season}.", "— escreva-me em {month}.", "— daqui a {n} meses talvez.", "— talvez no próximo ano."},
			},
			"not_interested": {
				{"", "Obrigado, mas", "Desculpe,"},
				{"não temos interesse.", "não precisamos disto.", "estamos contentes com {tool}.", "fazemos isso nós mesmos."},
				{"", "Retire-me da lista.", "Não me envie mais e-mails."},
			},
			"ooo": {
				{"Obrigado pelo seu e-mail.", "Bom dia,", ""},
				{"Estou fora do escritório até {date}", "Estou de férias até {date}", "Estou em viagem até {date}"},
				{"com acesso limitado ao e-mail.", "e não leio o e-mail.", "e responderei quando regressar."},
				{"", "Para urgências: {email}.", "O seu e-mail não será reencaminhado."},
			},
			"wrong_person": {
				{"", "Obrigado, mas", "Interessante, mas"},
				{"não sou a pessoa certa.", "não é o meu departamento.", "não sou eu que decido."},
				{"Fale com {colleague}.", "Escreva para {email}.", "Reencaminhei para {colleague}."},
			},
			"unclear": {
				{"Obrigado.", "Ok.", "Hmm."},
				{"", "Vou ver.", "Quem é?", "Do que se trata?", "Vou encaminhar."},
			},
		},
		extra:       map[string][]string{"interested": {"Até breve!"}, "question": {"Obrigado desde já."}, "not_interested": {"Boa sorte."}, "wrong_person": {"Boa sorte."}},
		away:        []string{"Estou de férias até {date}, mas", "Estou fora esta semana, mas rapidamente:", "Fora até {day}, mas"},
		softNo:      []string{"Parece interessante, mas", "Bom produto, mas"},
		neutral:     []string{"Somos uma equipa de {n} pessoas.", "Hoje usamos {tool}."},
		greet:       []string{"Olá {name},", "Bom dia,", "Caro {name},", "Boa tarde,", "Olá,", "Prezado {name},", "Oi {name},"},
		thanks:      []string{"Obrigado pela mensagem.", "Obrigado pelo e-mail.", "Obrigada pelo contacto."},
		signoff:     []string{"Cumprimentos,", "Abraço,", "Atenciosamente,", "Com os melhores cumprimentos,", "Obrigado,"},
		titles:      []string{"Diretor Comercial", "Responsável de Marketing", "Gerente", "Compras"},
		disclaimer:  []string{"Esta mensagem é confidencial. Se a recebeu por engano, por favor elimine-a."},
		mobile:      []string{"Enviado do meu iPhone", "Enviado do meu telemóvel"},
		quoteHead:   []string{"Em {date}, {name} escreveu:", "De: {name} <{email}>\nEnviado: {date}\nPara: {name}\nAssunto: {subject}"},
		outreach:    []string{"Olá, ajudamos equipas comerciais a marcar mais reuniões. Tem 15 minutos na próxima semana?"},
		autoSubject: []string{"Resposta automática: {subject}", "Ausente: {subject}", "Fora do escritório: {subject}"},
		leftAuto:    []string{"Já não trabalho na {co}. Por favor envie o seu e-mail para {email}.", "{name} já não faz parte da {co}. Esta caixa não é lida. Contacte {email}."},
		fills: map[string][]string{
			"day": {"segunda", "terça", "quarta", "quinta", "sexta", "amanhã", "na próxima semana"}, "month": {"janeiro", "março", "setembro", "abril"},
			"season": {"primavera", "verão", "outono", "janeiro"}, "date": {"4 de dezembro", "11 de janeiro", "14/12/2026", "segunda, 7 de dezembro"},
			"time": {"10h", "15h", "9h30", "14h"}, "dept": {"contabilidade", "recursos humanos", "produção", "TI"},
		},
	}
}
