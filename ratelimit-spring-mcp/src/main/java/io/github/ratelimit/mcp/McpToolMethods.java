package io.github.ratelimit.mcp;

import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.engine.InvalidRateLimitPolicyException;
import io.github.ratelimit.engine.RateLimitedMethods;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpSchema;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.MethodParameter;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.convert.ConversionException;
import org.springframework.core.convert.ConversionService;
import org.springframework.core.convert.TypeDescriptor;
import org.springframework.core.convert.support.DefaultConversionService;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * The {@code @RateLimited} tools of the application's beans, by the name an MCP client calls them: Spring AI's
 * {@code @McpTool} and {@code @Tool} methods, named by the annotation's {@code name} or else the method's.
 */
final class McpToolMethods {

	/** The annotations that make a method a tool, with a {@code name} attribute. */
	static final List<String> TOOL_ANNOTATIONS = List.of("org.springframework.ai.mcp.annotation.McpTool",
			"org.springframework.ai.tool.annotation.Tool");

	/** A rate limited tool: the method that implements it, and its parameters' names for its arguments. */
	record Target(Method method, Class<?> targetClass, String[] parameterNames) {

		/**
		 * The call's arguments as the method gets them: by name, converted to the parameter's type as the tool's are
		 * ({@code 5}, {@code "5"} and {@code 5.0} are one {@code int}), so that no spelling of a value is a key of its
		 * own; the exchange and the call for parameters of their types, none for any other of MCP's own.
		 */
		Object[] arguments(McpSchema.CallToolRequest call, McpSyncServerExchange exchange) {
			Map<String, Object> arguments = call.arguments();
			Object[] values = new Object[this.parameterNames.length];
			for (int i = 0; i < values.length; i++) {
				Class<?> type = this.method.getParameterTypes()[i];
				if (type.isInstance(exchange)) {
					values[i] = exchange;
				}
				else if (type.isInstance(call)) {
					values[i] = call;
				}
				else if (!type.getName().startsWith(MCP_PACKAGE) && arguments != null) {
					values[i] = converted(arguments.get(this.parameterNames[i]), new MethodParameter(this.method, i));
				}
			}
			return values;
		}

		private static @Nullable Object converted(@Nullable Object value, MethodParameter parameter) {
			if (value == null) {
				return null;
			}
			TypeDescriptor target = new TypeDescriptor(parameter);
			try {
				return CONVERSION.canConvert(TypeDescriptor.forObject(value), target)
						? CONVERSION.convert(value, TypeDescriptor.forObject(value), target) : value;
			}
			catch (ConversionException ex) {
				return null; // what the tool cannot take either: the call fails, counted
			}
		}

	}

	/** MCP's own types, which a tool takes from the call rather than from its arguments. */
	private static final String MCP_PACKAGE = "io.modelcontextprotocol.";

	private static final ConversionService CONVERSION = DefaultConversionService.getSharedInstance();

	private static final ParameterNameDiscoverer PARAMETER_NAMES = new DefaultParameterNameDiscoverer();

	private final Map<String, Target> targets;

	private McpToolMethods(Map<String, Target> targets) {
		this.targets = targets;
	}

	/**
	 * Find the rate limited tools of a bean factory's beans.
	 * @throws InvalidRateLimitPolicyException if two rate limited methods are tools of one name
	 */
	static McpToolMethods of(ConfigurableListableBeanFactory beanFactory) {
		Map<String, Target> targets = new HashMap<>();
		for (String name : beanFactory.getBeanDefinitionNames()) {
			Class<?> type = beanFactory.getType(name, false);
			if (type == null || !RateLimitedMethods.isCandidate(type)) {
				continue;
			}
			Class<?> userClass = ClassUtils.getUserClass(type);
			for (Method method : ReflectionUtils.getUniqueDeclaredMethods(userClass,
					ReflectionUtils.USER_DECLARED_METHODS)) {
				String tool = toolName(method);
				if (tool == null || RateLimitedMethods.annotationsOf(method, userClass).isEmpty()) {
					continue;
				}
				String[] names = PARAMETER_NAMES.getParameterNames(method);
				Target target = new Target(method, userClass, (names != null) ? names : new String[0]);
				Target other = targets.putIfAbsent(tool, target);
				if (other != null && !other.method().equals(method)) {
					throw new InvalidRateLimitPolicyException(tool, "Two rate limited methods are MCP tools named '"
							+ tool + "': " + userClass.getSimpleName() + "#" + method.getName() + " and "
							+ other.targetClass().getSimpleName() + "#" + other.method().getName()
							+ ". Name each tool apart ('name' of @McpTool or @Tool).");
				}
			}
		}
		return new McpToolMethods(Map.copyOf(targets));
	}

	/**
	 * Return the rate limited method a call of a tool invokes.
	 * @param tool the tool's name
	 * @return the target, or {@code null} if the tool is not rate limited
	 */
	@Nullable Target find(String tool) {
		return this.targets.get(tool);
	}

	/** A tool's name, or {@code null} for a method that is no tool. */
	static @Nullable String toolName(Method method) {
		MergedAnnotations annotations = MergedAnnotations.from(method);
		for (String type : TOOL_ANNOTATIONS) {
			MergedAnnotation<?> tool = annotations.get(type);
			if (tool.isPresent()) {
				String name = tool.getString("name");
				return name.isEmpty() ? method.getName() : name;
			}
		}
		return null;
	}

}
