package io.github.ratelimit.ai;

import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.ai.chat.client.ChatClientRequest;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.StandardEvaluationContext;

import static org.assertj.core.api.Assertions.assertThat;

/** What key, tenant and skip expressions see of a chat call, and the default estimate. */
class ChatRateLimitRequestTests {

	@Test
	void expressionsSeeTheAdvisorContextTheModelAndTheEstimate() {
		ChatClientRequest call = new ChatClientRequest(
				new Prompt("hi", ChatOptions.builder().model("gpt-large").build()),
				Map.of("user", "ada", "tenant", "acme"));
		ChatRateLimitRequest request = new ChatRateLimitRequest(call, null, 7);
		StandardEvaluationContext context = new StandardEvaluationContext();
		context.setVariables(request.getExpressionVariables());
		Object key = new SpelExpressionParser()
			.parseExpression("#context['tenant'] + ':' + #context['user'] + ':' + #model + ':' + #estimatedTokens")
			.getValue(context);
		assertThat(key).isEqualTo("acme:ada:gpt-large:7");
		assertThat(request.getNativeRequest()).isSameAs(call);
		assertThat(request.getRemoteAddr()).as("no HTTP request: no address").isNull();
	}

	@Test
	void theDefaultEstimateAddsTheMostTheAnswerMayTake() {
		ChatClientRequest call = new ChatClientRequest(
				new Prompt("x".repeat(8), ChatOptions.builder().maxTokens(500).build()), Map.of());
		assertThat(TokenEstimator.DEFAULT.estimate(call)).isEqualTo(502);
	}

	@Test
	void anEstimatorOfItsOwnCountsAsItSays() {
		ChatClientRequest call = new ChatClientRequest(new Prompt("x".repeat(10)), Map.of());
		assertThat(TokenEstimator.charactersPerToken(1).estimate(call)).isEqualTo(10);
		org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
			.isThrownBy(() -> TokenEstimator.charactersPerToken(0));
	}

	@Test
	void theDefaultEstimateIsFourCharactersATokenRoundedUpAndAtLeastOne() {
		assertThat(TokenEstimator.DEFAULT.estimate(new ChatClientRequest(new Prompt("x".repeat(9)), Map.of())))
			.isEqualTo(3);
		assertThat(TokenEstimator.DEFAULT.estimate(new ChatClientRequest(new Prompt(""), Map.of()))).isEqualTo(1);
	}

}
