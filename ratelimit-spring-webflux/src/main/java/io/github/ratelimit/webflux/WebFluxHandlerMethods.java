package io.github.ratelimit.webflux;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import io.github.ratelimit.web.HandlerMethods;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.util.pattern.PathPattern;

/**
 * The handler methods of WebFlux's {@code @RequestMapping} handler mappings.
 *
 * @since 0.4.0
 */
public final class WebFluxHandlerMethods implements HandlerMethods {

	private final ObjectProvider<RequestMappingHandlerMapping> handlerMappings;

	/**
	 * Create the view of the application's handler mappings.
	 * @param handlerMappings the handler mappings, read when asked
	 */
	public WebFluxHandlerMethods(ObjectProvider<RequestMappingHandlerMapping> handlerMappings) {
		this.handlerMappings = handlerMappings;
	}

	@Override
	public List<Mapping> mappings() {
		List<Mapping> mappings = new ArrayList<>();
		this.handlerMappings.orderedStream()
			.forEach((handlerMapping) -> handlerMapping.getHandlerMethods()
				.forEach((info, handler) -> mappings.add(new Mapping(
						info.getMethodsCondition().getMethods().stream().map(Enum::name).collect(Collectors.toSet()),
						info.getPatternsCondition()
							.getPatterns()
							.stream()
							.map(PathPattern::getPatternString)
							.collect(Collectors.toSet()),
						handler.getBeanType(), handler.getMethod()))));
		return mappings;
	}

}
