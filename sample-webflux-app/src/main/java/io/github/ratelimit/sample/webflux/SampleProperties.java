package io.github.ratelimit.sample.webflux;

import java.util.Map;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The sample's own settings.
 *
 * @param apiKeys the API keys this API issued, each with its plan (a real application keeps them in its database)
 */
@ConfigurationProperties("sample")
public record SampleProperties(Map<String, String> apiKeys) {

	public SampleProperties {
		apiKeys = (apiKeys != null) ? Map.copyOf(apiKeys) : Map.of();
	}

}
