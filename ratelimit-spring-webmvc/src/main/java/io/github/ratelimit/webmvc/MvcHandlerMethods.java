package io.github.ratelimit.webmvc;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import io.github.ratelimit.web.HandlerMethods;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/**
 * The handler methods of Spring MVC's {@code @RequestMapping} handler mappings.
 *
 * @since 0.4.0
 */
public final class MvcHandlerMethods implements HandlerMethods {

	private final ObjectProvider<RequestMappingHandlerMapping> handlerMappings;

	/**
	 * Create the view of the application's handler mappings.
	 * @param handlerMappings the handler mappings, read when asked
	 */
	public MvcHandlerMethods(ObjectProvider<RequestMappingHandlerMapping> handlerMappings) {
		this.handlerMappings = handlerMappings;
	}

	@Override
	public List<Mapping> mappings() {
		List<Mapping> mappings = new ArrayList<>();
		this.handlerMappings.orderedStream()
			.forEach((handlerMapping) -> handlerMapping.getHandlerMethods()
				.forEach((info, handler) -> mappings.add(new Mapping(
						info.getMethodsCondition().getMethods().stream().map(Enum::name).collect(Collectors.toSet()),
						info.getPatternValues(), handler.getBeanType(), handler.getMethod()))));
		return mappings;
	}

}
