package io.github.ratelimit.ai;

import org.springframework.ai.chat.client.ChatClientRequest;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.prompt.ChatOptions;

/**
 * Estimates the tokens a chat call will cost before the model is called: what its budget reserves, and settles to the
 * tokens the response's usage reports once it is known. An estimate too low lets a call through that the budget then
 * pays for in debt; one too high rejects calls the budget could have paid for.
 *
 * @since 0.5.0
 */
@FunctionalInterface
public interface TokenEstimator {

	/** About four characters a token, as OpenAI's tokenizers average on English text. */
	TokenEstimator DEFAULT = charactersPerToken(4);

	/**
	 * Estimate a call's tokens.
	 * @param request the call, as the model will get it
	 * @return the estimate, at least 1
	 */
	long estimate(ChatClientRequest request);

	/**
	 * Return an estimator that counts the characters of the prompt's messages and divides them by a number, rounding
	 * up: the prompt's tokens, roughly; plus the most the completion may take when the call's options say
	 * ({@code maxTokens}), so that a budget that cannot cover a long answer refuses the call before the model runs.
	 * Without {@code maxTokens}, the completion's tokens are settled once the response says what they were.
	 * @param characters the characters a token stands for, at least 1
	 * @return the estimator
	 */
	static TokenEstimator charactersPerToken(int characters) {
		if (characters < 1) {
			throw new IllegalArgumentException("'characters' must be at least 1 but was " + characters);
		}
		return (request) -> {
			long length = 0;
			for (Message message : request.prompt().getInstructions()) {
				String text = message.getText();
				length += (text != null) ? text.length() : 0;
			}
			ChatOptions options = request.prompt().getOptions();
			Integer maxTokens = (options != null) ? options.getMaxTokens() : null;
			long completion = (maxTokens != null && maxTokens > 0) ? maxTokens : 0;
			return Math.max(1, (length + characters - 1) / characters + completion);
		};
	}

}
